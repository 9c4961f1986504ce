//go:build !amd64 || purego

package micro

func sumFloor(v []float32) float32 { return sum8(v) }
