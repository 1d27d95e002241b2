package rpma

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/uverbs"
)

// TestConnConfigZeroFields checks that every ConnConfig a request is
// made from goes through one defaulting: a field left 0 takes librpma's
// default, except RCQSize, whose 0 means no receive CQ; explicit values
// stay; negative ones are ErrInvalid; and the caller's value is not
// changed.
func TestConnConfigZeroFields(t *testing.T) {
	srq := &SRQ{}
	def := DefaultConnConfig()
	tests := []struct {
		name string
		in   *ConnConfig
		want ConnConfig
		err  error
	}{
		{"nil", nil, def, nil},
		{"zero value", &ConnConfig{}, def, nil},
		{"only RCQSize", &ConnConfig{RCQSize: 4},
			ConnConfig{Timeout: DefaultTimeout, CQSize: DefaultQueueSize, RCQSize: 4, SQSize: DefaultQueueSize, RQSize: DefaultQueueSize}, nil},
		{"only Timeout", &ConnConfig{Timeout: 3 * time.Second},
			ConnConfig{Timeout: 3 * time.Second, CQSize: 10, SQSize: 10, RQSize: 10}, nil},
		{"only CQSize", &ConnConfig{CQSize: 1}, ConnConfig{Timeout: time.Second, CQSize: 1, SQSize: 10, RQSize: 10}, nil},
		{"only SQSize", &ConnConfig{SQSize: 64}, ConnConfig{Timeout: time.Second, CQSize: 10, SQSize: 64, RQSize: 10}, nil},
		{"only RQSize", &ConnConfig{RQSize: 2}, ConnConfig{Timeout: time.Second, CQSize: 10, SQSize: 10, RQSize: 2}, nil},
		{"flags and SRQ only", &ConnConfig{SharedCompChannel: true, SRQ: srq},
			ConnConfig{Timeout: time.Second, CQSize: 10, SQSize: 10, RQSize: 10, SharedCompChannel: true, SRQ: srq}, nil},
		{"all explicit", &ConnConfig{Timeout: time.Millisecond, CQSize: 3, RCQSize: 5, SQSize: 7, RQSize: 9},
			ConnConfig{Timeout: time.Millisecond, CQSize: 3, RCQSize: 5, SQSize: 7, RQSize: 9}, nil},
		{"DefaultConnConfig", &def, def, nil},
		{"negative Timeout", &ConnConfig{Timeout: -1}, ConnConfig{}, ErrInvalid},
		{"negative CQSize", &ConnConfig{CQSize: -1}, ConnConfig{}, ErrInvalid},
		{"negative RCQSize", &ConnConfig{RCQSize: -1}, ConnConfig{}, ErrInvalid},
		{"negative SQSize", &ConnConfig{SQSize: -1}, ConnConfig{}, ErrInvalid},
		{"negative RQSize", &ConnConfig{RQSize: -1}, ConnConfig{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before ConnConfig
			if tt.in != nil {
				before = *tt.in
			}
			got, err := tt.in.orDefault()
			if !errors.Is(err, tt.err) {
				t.Fatalf("orDefault() error %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if *got != tt.want {
				t.Errorf("orDefault() = %+v, want %+v", *got, tt.want)
			}
			if tt.in != nil {
				if *tt.in != before {
					t.Errorf("orDefault changed the caller's config to %+v", *tt.in)
				}
				if got == tt.in {
					t.Errorf("orDefault returned the caller's config, not a copy")
				}
			}
		})
	}
}

// TestOpZeroFlags checks what each Op.Flags posts: 0 and
// CompletionAlways a signaled request, CompletionOnError an unsignaled
// one, anything else ErrInvalid.
func TestOpZeroFlags(t *testing.T) {
	tests := []struct {
		flags CompletionFlags
		want  uverbs.SendFlags
		err   error
	}{
		{0, uverbs.SendSignaled, nil},
		{CompletionAlways, uverbs.SendSignaled, nil},
		{CompletionOnError, 0, nil},
		{1 << 1, 0, ErrInvalid}, // RPMA_F_COMPLETION_ALWAYS without ON_ERROR's bit
		{4, 0, ErrInvalid},
		{-1, 0, ErrInvalid},
	}
	for _, tt := range tests {
		got, err := sendFlags(tt.flags)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("sendFlags(%#x) = %v, %v; want %v, %v", int(tt.flags), got, err, tt.want, tt.err)
		}
	}
	if got, err := sendFlags(Op{}.Flags); got != uverbs.SendSignaled || err != nil {
		t.Errorf("the zero Op's flags post %v, %v; want a signaled request", got, err)
	}
}

// recorder is a slog.Handler that keeps the messages it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// TestSilentByDefault checks that with no logger set (and after
// SetLogger(nil)) the error paths that log write nothing to
// slog.Default, even with every level let through, while still
// returning their errors; and that SetLogger(slog.Default()) sends the
// same records there.
func TestSilentByDefault(t *testing.T) {
	saveLog(t)
	old := slog.Default()
	rec := &recorder{}
	slog.SetDefault(slog.New(rec))
	t.Cleanup(func() { slog.SetDefault(old) })
	if err := SetLogThreshold(LogThresholdPrimary, LogDebug); err != nil {
		t.Fatal(err)
	}
	errorPaths := func(t *testing.T) {
		t.Helper()
		if err := provider("post", syscall.ENOMEM); !errors.Is(err, ErrProvider) || !errors.Is(err, syscall.ENOMEM) {
			t.Errorf("provider error = %v, want ErrProvider wrapping ENOMEM", err)
		}
		if err := provider("advise", syscall.EOPNOTSUPP); !errors.Is(err, ErrProvider) || !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("provider error = %v, want ErrProvider wrapping EOPNOTSUPP", err)
		}
	}

	logState.Lock()
	logState.logger = nil // as in a new process
	logState.Unlock()
	errorPaths(t)
	if got := rec.got(); len(got) != 0 {
		t.Errorf("with no logger set, slog.Default got %q, want nothing", got)
	}

	SetLogger(slog.New(rec))
	SetLogger(nil)
	errorPaths(t)
	if got := rec.got(); len(got) != 0 {
		t.Errorf("after SetLogger(nil), slog.Default got %q, want nothing", got)
	}

	SetLogger(slog.Default())
	errorPaths(t)
	if got := rec.got(); len(got) != 2 {
		t.Errorf("with SetLogger(slog.Default()), slog.Default got %q, want the 2 records", got)
	}
}

// TestSRQConfigZeroFields checks NewSRQ's defaulting: nil is
// DefaultSRQConfig, RQSize 0 is DefaultSRQSize, RCQSize 0 stays "no
// receive CQ", negative sizes are ErrInvalid.
func TestSRQConfigZeroFields(t *testing.T) {
	tests := []struct {
		name string
		in   *SRQConfig
		want SRQConfig
		err  error
	}{
		{"nil", nil, SRQConfig{RQSize: 20, RCQSize: 20}, nil},
		{"zero value", &SRQConfig{}, SRQConfig{RQSize: 20}, nil},
		{"only RCQSize", &SRQConfig{RCQSize: 4}, SRQConfig{RQSize: 20, RCQSize: 4}, nil},
		{"only RQSize", &SRQConfig{RQSize: 3}, SRQConfig{RQSize: 3}, nil},
		{"negative RQSize", &SRQConfig{RQSize: -1}, SRQConfig{}, ErrInvalid},
		{"negative RCQSize", &SRQConfig{RCQSize: -1}, SRQConfig{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.orDefault()
			if !errors.Is(err, tt.err) || (tt.err != nil) != (err != nil) {
				t.Fatalf("orDefault() error %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("orDefault() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPostErr checks the text of a full send queue's refusal and that
// other refusals keep the plain one.
func TestPostErr(t *testing.T) {
	c := &Conn{req: &ConnRequest{cfg: &ConnConfig{SQSize: 10}}}
	full := c.postErr(uverbs.ErrQueueFull)
	if !errors.Is(full, ErrProvider) || !errors.Is(full, uverbs.ErrQueueFull) {
		t.Errorf("postErr(ErrQueueFull) = %v, want ErrProvider and uverbs.ErrQueueFull", full)
	}
	const want = "rpma: post: send queue full (SQSize 10): every slot holds an operation in flight; " +
		"an unsignaled one (CompletionOnError) is released only by the completion of a later signaled one, once collected: "
	if got := full.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("postErr(ErrQueueFull) says %q, want it to start with %q", got, want)
	}
	if got := c.postErr(uverbs.ErrInvalid).Error(); strings.Contains(got, "send queue full") {
		t.Errorf("postErr(ErrInvalid) says %q", got)
	}
}
