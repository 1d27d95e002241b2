//go:build !linux || purerdma_stub

package main

import (
	"context"

	"github.com/purerdma/purerdma/internal/unsupported"
)

// Without Linux's epoll the server of 06-multiple-connections fails to
// start; it gets no further than its listening endpoint, which fails too.

func epollCreate() (int, error) { return -1, unsupported.Error("epoll") }

func epollClose(epfd int) {}

func epollDel(epfd, fd int) {}

func (s *multiServerRes) loop(ctx context.Context) error { return unsupported.Error("epoll") }

func (s *multiServerRes) add(fd int, h func()) error { return unsupported.Error("epoll") }
