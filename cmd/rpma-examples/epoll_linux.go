//go:build !purerdma_stub

package main

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// The epoll calls of 06-multiple-connections; epoll_other.go stubs them.

func epollCreate() (int, error) { return unix.EpollCreate1(unix.EPOLL_CLOEXEC) }

func epollClose(epfd int) { unix.Close(epfd) }

func epollDel(epfd, fd int) { unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, fd, nil) }

// loop is the epoll_wait loop: one event at a time until multiIdle passes
// without any.
func (s *multiServerRes) loop(ctx context.Context) error {
	events := make([]unix.EpollEvent, 1)
	idle := time.Now().Add(multiIdle)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(idle)
		if left <= 0 {
			return errTimedOut
		}
		n, err := unix.EpollWait(s.epoll, events, int(min(left, 100*time.Millisecond)/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 1 {
			if h := s.handlers[int(events[0].Fd)]; h != nil {
				h()
			}
			idle = time.Now().Add(multiIdle)
		}
	}
}

func (s *multiServerRes) add(fd int, h func()) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(s.epoll, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return err
	}
	s.handlers[fd] = h
	return nil
}
