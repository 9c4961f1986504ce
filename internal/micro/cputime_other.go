//go:build !linux

package micro

func processCPU() (int64, bool) { return 0, false }
