//go:build !race

package tokenizer

// raceEnabled is false without -race (race_test.go has true).
const raceEnabled = false
