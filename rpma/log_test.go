package rpma

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// saveLog restores the package's log state when the test ends.
func saveLog(t *testing.T) {
	t.Helper()
	logState.Lock()
	levels, logger := logState.levels, logState.logger
	logState.Unlock()
	t.Cleanup(func() {
		logState.Lock()
		logState.levels, logState.logger = levels, logger
		logState.Unlock()
	})
}

// TestLogThresholdDefaults checks librpma's release-build defaults.
func TestLogThresholdDefaults(t *testing.T) {
	for _, tt := range []struct {
		th   LogThresholdKind
		want LogLevel
	}{{LogThresholdPrimary, LogWarning}, {LogThresholdAux, LogDisabled}} {
		got, err := LogThreshold(tt.th)
		if err != nil || got != tt.want {
			t.Errorf("LogThreshold(%d) = %d, %v; want %d", tt.th, got, err, tt.want)
		}
	}
}

// TestLogThreshold checks rpma_log_set_threshold's and
// rpma_log_get_threshold's validation: two thresholds, levels DISABLED to
// DEBUG.
func TestLogThreshold(t *testing.T) {
	saveLog(t)
	tests := []struct {
		name    string
		th      LogThresholdKind
		level   LogLevel
		wantErr error
	}{
		{"primary disabled", LogThresholdPrimary, LogDisabled, nil},
		{"primary fatal", LogThresholdPrimary, LogFatal, nil},
		{"primary debug", LogThresholdPrimary, LogDebug, nil},
		{"aux notice", LogThresholdAux, LogNotice, nil},
		{"aux disabled", LogThresholdAux, LogDisabled, nil},
		{"level below disabled", LogThresholdPrimary, LogDisabled - 1, ErrInvalid},
		{"level above debug", LogThresholdAux, LogDebug + 1, ErrInvalid},
		{"threshold MAX", LogThresholdKind(2), LogInfo, ErrInvalid},
		{"negative threshold", LogThresholdKind(-1), LogInfo, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before [2]LogLevel
			for i := range before {
				before[i], _ = LogThreshold(LogThresholdKind(i))
			}
			err := SetLogThreshold(tt.th, tt.level)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("SetLogThreshold(%d, %d) = %v, want %v", tt.th, tt.level, err, tt.wantErr)
			}
			for i := range before {
				want := before[i]
				if err == nil && LogThresholdKind(i) == tt.th {
					want = tt.level
				}
				if got, err := LogThreshold(LogThresholdKind(i)); err != nil || got != want {
					t.Errorf("after SetLogThreshold(%d, %d): LogThreshold(%d) = %d, %v; want %d", tt.th, tt.level, i, got, err, want)
				}
			}
		})
	}
	for _, th := range []LogThresholdKind{-1, 2, 100} {
		if _, err := LogThreshold(th); !errors.Is(err, ErrInvalid) {
			t.Errorf("LogThreshold(%d) = %v, want ErrInvalid", th, err)
		}
	}
}

// TestLogger checks SetLogger and the thresholds' effect on what it
// receives.
func TestLogger(t *testing.T) {
	saveLog(t)
	var buf bytes.Buffer
	SetLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	tests := []struct {
		name      string
		primary   LogLevel
		aux       LogLevel
		level     LogLevel
		wantLevel string // "" when nothing is logged
	}{
		{"warning at default threshold", LogWarning, LogDisabled, LogWarning, "WARN"},
		{"notice above default threshold", LogWarning, LogDisabled, LogNotice, ""},
		{"error", LogWarning, LogDisabled, LogError, "ERROR"},
		{"fatal", LogWarning, LogDisabled, LogFatal, "ERROR"},
		{"debug at debug", LogDebug, LogDisabled, LogDebug, "DEBUG"},
		{"info at debug", LogDebug, LogDisabled, LogInfo, "INFO"},
		{"notice at debug", LogDebug, LogDisabled, LogNotice, "INFO"},
		{"disabled", LogDisabled, LogDisabled, LogFatal, ""},
		{"aux raises to error", LogDebug, LogNotice, LogNotice, "ERROR"},
		{"above aux keeps its level", LogDebug, LogNotice, LogInfo, "INFO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := SetLogThreshold(LogThresholdPrimary, tt.primary); err != nil {
				t.Fatal(err)
			}
			if err := SetLogThreshold(LogThresholdAux, tt.aux); err != nil {
				t.Fatal(err)
			}
			buf.Reset()
			logf(tt.level, "hello", "k", "v")
			out := buf.String()
			if tt.wantLevel == "" {
				if out != "" {
					t.Errorf("logged %q, want nothing", out)
				}
				return
			}
			for _, want := range []string{"level=" + tt.wantLevel, "msg=hello", "k=v", "rpma_level=" + string(rune('0'+int(tt.level)))} {
				if !strings.Contains(out, want) {
					t.Errorf("logged %q, want it to contain %q", out, want)
				}
			}
		})
	}
	SetLogger(nil)
	logState.Lock()
	defer logState.Unlock()
	if logState.logger != nil {
		t.Errorf("SetLogger(nil) left a logger")
	}
}
