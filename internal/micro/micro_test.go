package micro

import "testing"

func mustCases(b *testing.B, suite string) []Case {
	cs, err := Cases(suite)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func BenchmarkAggregate(b *testing.B)   { RunSub(b, mustCases(b, "fedavg"), "Aggregate") }
func BenchmarkMemoryFloor(b *testing.B) { RunSub(b, mustCases(b, "fedavg"), "MemoryFloor") }
func BenchmarkCodec(b *testing.B)       { RunSub(b, mustCases(b, "codec"), "Codec") }
