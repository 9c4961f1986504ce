package cli

import (
	"errors"
	"fmt"
)

// Exit codes returned by Main. They are part of the public contract.
const (
	ExitOK           = 0
	ExitError        = 1
	ExitUsage        = 2
	ExitRegression   = 3
	ExitInconclusive = 4
	ExitInvalidRun   = 5
	ExitTargetMissed = 6
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf returns an error that makes Main exit with ExitUsage.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// withCode wraps err so that Main exits with code. A nil err stays nil;
// ExitError keeps a more specific code err already carries.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var inner *exitError
	if code == ExitError && errors.As(err, &inner) {
		return err // a more specific code (a usage error: 2) is kept
	}
	return &exitError{code: code, err: err}
}

// silentExit makes Main exit with code without printing anything more: the
// command has already reported (e.g. a gate verdict or an invalid run).
func silentExit(code int) error {
	return &exitError{code: code, err: errSilent}
}

var errSilent = errors.New("")

// exitCode maps an error returned by a command to its exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitError
}
