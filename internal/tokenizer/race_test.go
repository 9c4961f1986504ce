//go:build race

package tokenizer

// raceEnabled is true in a -race build (norace_test.go has false).
const raceEnabled = true
