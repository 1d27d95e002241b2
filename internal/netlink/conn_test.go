//go:build linux

package netlink_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/netlink"
	"github.com/purerdma/purerdma/internal/netlink/nltest"
)

func TestExecuteSetsFlags(t *testing.T) {
	for _, tt := range []struct {
		name      string
		flags     uint16
		wantFlags uint16
	}{
		{"request gets an ack", 0, unix.NLM_F_REQUEST | unix.NLM_F_ACK},
		{"create keeps its flags", unix.NLM_F_CREATE | unix.NLM_F_EXCL,
			unix.NLM_F_REQUEST | unix.NLM_F_ACK | unix.NLM_F_CREATE | unix.NLM_F_EXCL},
		{"dump gets no ack", unix.NLM_F_DUMP, unix.NLM_F_REQUEST | unix.NLM_F_DUMP},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seqs []uint32
			c := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
				if req.Header.Flags != tt.wantFlags {
					t.Errorf("flags = %#x, want %#x", req.Header.Flags, tt.wantFlags)
				}
				seqs = append(seqs, req.Header.Seq)
				return nil, nil
			})
			defer c.Close()
			for range 2 {
				if _, err := c.Execute(netlink.Message{Header: unix.NlMsghdr{Type: 100, Flags: tt.flags}}); err != nil {
					t.Fatal(err)
				}
			}
			if len(seqs) != 2 || seqs[0] == seqs[1] {
				t.Errorf("sequence numbers %v, want two different ones", seqs)
			}
		})
	}
}

func TestExecuteReplies(t *testing.T) {
	reply := func(s string) netlink.Message {
		return netlink.Message{Header: unix.NlMsghdr{Type: 100}, Data: []byte(s)}
	}
	for _, tt := range []struct {
		name    string
		flags   uint16
		replies []netlink.Message
	}{
		{"no reply, only the ack", 0, nil},
		{"one reply then the ack", 0, []netlink.Message{reply("one")}},
		{"empty dump", unix.NLM_F_DUMP, nil},
		{"dump", unix.NLM_F_DUMP, []netlink.Message{reply("a"), reply("b"), reply("c")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := nltest.Dial(func(netlink.Message) ([]netlink.Message, error) { return tt.replies, nil })
			defer c.Close()
			got, err := c.Execute(netlink.Message{Header: unix.NlMsghdr{Type: 100, Flags: tt.flags}})
			if err != nil {
				t.Fatal(err)
			}
			var gotData, wantData []string
			for _, m := range got {
				gotData = append(gotData, string(m.Data))
			}
			for _, m := range tt.replies {
				wantData = append(wantData, string(m.Data))
			}
			if diff := cmp.Diff(wantData, gotData); diff != "" {
				t.Errorf("replies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExecuteLargeDump returns more than fits in one page, the size the
// kernel uses for one dump datagram when the reader's buffer is small.
func TestExecuteLargeDump(t *testing.T) {
	var replies []netlink.Message
	for i := range 500 {
		replies = append(replies, netlink.Message{Header: unix.NlMsghdr{Type: 100}, Data: []byte(strings.Repeat("x", i))})
	}
	c := nltest.Dial(func(netlink.Message) ([]netlink.Message, error) { return replies, nil })
	defer c.Close()
	got, err := c.Execute(netlink.Message{Header: unix.NlMsghdr{Type: 100, Flags: unix.NLM_F_DUMP}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(replies) {
		t.Fatalf("got %d replies, want %d", len(got), len(replies))
	}
	for i, m := range got {
		if len(m.Data) != i {
			t.Fatalf("reply %d has %d bytes, want %d", i, len(m.Data), i)
		}
	}
}

func TestExecuteErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		flags    uint16
		replies  []netlink.Message
		err      error
		wantIs   error
		wantText string
	}{
		{name: "errno", err: unix.EEXIST, wantIs: unix.EEXIST, wantText: "file exists"},
		{name: "errno matches os error", err: unix.EEXIST, wantIs: os.ErrExist},
		{name: "extended ack", err: &netlink.Error{Errno: unix.EINVAL, Message: "Missing attribute"},
			wantIs: unix.EINVAL, wantText: "invalid argument: Missing attribute"},
		{name: "dump refused", flags: unix.NLM_F_DUMP, err: unix.EOPNOTSUPP, wantIs: unix.EOPNOTSUPP},
		{name: "dump fails midway", flags: unix.NLM_F_DUMP,
			replies: []netlink.Message{{Header: unix.NlMsghdr{Type: 100}}},
			err:     &netlink.Error{Errno: unix.EMSGSIZE, Message: "too big"},
			wantIs:  unix.EMSGSIZE, wantText: "message too long: too big"},
		{name: "socket fails", err: unix.EBADF, wantIs: unix.EBADF},
		{name: "transport error", err: errors.New("wire cut"), wantText: "wire cut"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := nltest.Dial(func(netlink.Message) ([]netlink.Message, error) { return tt.replies, tt.err })
			defer c.Close()
			_, err := c.Execute(netlink.Message{Header: unix.NlMsghdr{Type: 100, Flags: tt.flags}})
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not match %v", err, tt.wantIs)
			}
			if tt.wantText != "" && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not contain %q", err, tt.wantText)
			}
		})
	}
}

func TestCloseIdempotent(t *testing.T) {
	c := nltest.Dial(func(netlink.Message) ([]netlink.Message, error) { return nil, nil })
	for i := range 3 {
		if err := c.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if _, err := c.Execute(netlink.Message{Header: unix.NlMsghdr{Type: 100}}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Execute after Close: %v, want %v", err, os.ErrClosed)
	}
}

// TestExecuteConcurrent has goroutines share a Conn; each must get the
// replies to its own request.
func TestExecuteConcurrent(t *testing.T) {
	c := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
		// Echo the request's payload so each caller can check its reply.
		return []netlink.Message{{Header: unix.NlMsghdr{Type: 100}, Data: req.Data}}, nil
	})
	defer c.Close()
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			want := strings.Repeat(string(rune('a'+i)), 5)
			for range 50 {
				got, err := c.Execute(netlink.Message{Header: unix.NlMsghdr{Type: 100}, Data: []byte(want)})
				if err == nil && (len(got) != 1 || string(got[0].Data) != want) {
					err = errors.New("reply to another request")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
