package rpma

import (
	"context"
	"log/slog"
	"sync"
)

// LogLevel is a librpma log level (enum rpma_log_level).
type LogLevel int

// Log levels.
const (
	LogDisabled LogLevel = -1
	LogFatal    LogLevel = 0
	LogError    LogLevel = 1
	LogWarning  LogLevel = 2
	LogNotice   LogLevel = 3
	LogInfo     LogLevel = 4
	LogDebug    LogLevel = 5
)

// LogThresholdKind selects a threshold (enum rpma_log_threshold):
// the primary one, which decides what reaches the logger, and the
// auxiliary one, which in librpma decides what is copied to stderr and
// here raises records above it to slog.LevelError.
type LogThresholdKind int

// Thresholds.
const (
	LogThresholdPrimary LogThresholdKind = 0 // RPMA_LOG_THRESHOLD
	LogThresholdAux     LogThresholdKind = 1 // RPMA_LOG_THRESHOLD_AUX
)

var logState = struct {
	sync.Mutex
	levels [2]LogLevel
	logger *slog.Logger // nil: no logging
}{levels: [2]LogLevel{LogWarning, LogDisabled}}

// SetLogThreshold sets a threshold (rpma_log_set_threshold); librpma's
// release defaults are WARNING and DISABLED.
func SetLogThreshold(t LogThresholdKind, l LogLevel) error {
	if t != LogThresholdPrimary && t != LogThresholdAux || l < LogDisabled || l > LogDebug {
		return inval("log threshold %d level %d", t, l)
	}
	logState.Lock()
	defer logState.Unlock()
	logState.levels[t] = l
	return nil
}

// LogThreshold returns a threshold (rpma_log_get_threshold).
func LogThreshold(t LogThresholdKind) (LogLevel, error) {
	if t != LogThresholdPrimary && t != LogThresholdAux {
		return 0, inval("log threshold %d", t)
	}
	logState.Lock()
	defer logState.Unlock()
	return logState.levels[t], nil
}

// SetLogger sends the package's log records to l
// (rpma_log_set_function, with log/slog as the function); nil, the
// default, logs nothing. The package logs what librpma logs: a provider
// failure at LogError (the error is returned all the same), a missing
// native flush or atomic write at LogInfo when a Peer is made, and
// Advise's ErrUnsupported at LogError; the thresholds (SetLogThreshold)
// then pick what reaches l. Unlike librpma, which writes to syslog and
// stderr until told otherwise, the package is silent until given a
// logger: the caller already gets every error it would log.
// SetLogger(slog.Default()) sends the records to the program's default
// logger.
func SetLogger(l *slog.Logger) {
	logState.Lock()
	defer logState.Unlock()
	logState.logger = l
}

// slogLevel maps librpma's levels onto slog's.
func slogLevel(l LogLevel) slog.Level {
	switch {
	case l <= LogError:
		return slog.LevelError
	case l == LogWarning:
		return slog.LevelWarn
	case l <= LogInfo:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// logf logs msg at level l if the primary threshold lets it through.
func logf(l LogLevel, msg string, args ...any) {
	logState.Lock()
	thr, aux, lg := logState.levels[LogThresholdPrimary], logState.levels[LogThresholdAux], logState.logger
	logState.Unlock()
	if lg == nil || l > thr {
		return
	}
	lvl := slogLevel(l)
	if aux != LogDisabled && l <= aux {
		lvl = slog.LevelError
	}
	lg.Log(context.Background(), lvl, msg, append(args, "rpma_level", int(l))...)
}
