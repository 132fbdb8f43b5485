package record

import (
	"errors"
	"fmt"
)

// Exit codes of the recording commands, from sysexits(3).
const (
	ExitUsage = 64 // bad arguments: not a recording, no such file, a file that exists
	ExitData  = 65 // a recording that cannot be used: newer format, empty, no targets
)

// Error is a problem with a recording or with how it was named, with the
// exit code a command should end with.
type Error struct {
	Code int    // ExitUsage or ExitData
	Path string // the file, when known
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Problems a reader reports.
var (
	ErrNotRecording = errors.New("not a vtop recording")
	ErrEmpty        = errors.New("empty file: the recording was never started")
	ErrNoTargets    = errors.New("the recording has no targets")
	ErrNoHeader     = errors.New("the recording's header is damaged")
)

// newerFormat is the error for a file written by a newer vtop.
func newerFormat(v int) error {
	return fmt.Errorf("recording format %d is newer than this vtop reads (%d): use a newer vtop", v, FormatVersion)
}

func usageErr(path string, err error) *Error { return &Error{Code: ExitUsage, Path: path, Err: err} }
func dataErr(path string, err error) *Error  { return &Error{Code: ExitData, Path: path, Err: err} }
