package micro

import (
	"fmt"
	"testing"
)

// Case is one named benchmark body. Its full name, as go test prints it,
// is "Benchmark" + Bench + "/" + Sub.
type Case struct {
	Bench string // top-level benchmark: Aggregate, MemoryFloor, Codec
	Sub   string // key=value path, e.g. clients=32/dim=2048/workers=auto
	// Mohawk is the name the Sovereign-Mohawk benchmark contract gives
	// this case (BenchmarkAggregateParallel/clients512_dim8192/workersAuto),
	// "" where the contract has none.
	Mohawk string
	Run    func(b *testing.B)
}

// Name is the benchmark name without the -GOMAXPROCS suffix.
func (c Case) Name() string { return "Benchmark" + c.Bench + "/" + c.Sub }

// Naming schemes of Options.Names.
const (
	NamesSagebench = "sagebench"
	NamesMohawk    = "mohawk"
)

// NameIn is the case's name under a naming scheme: the Mohawk contract's
// name where it has one, else Name.
func (c Case) NameIn(names string) string {
	if names == NamesMohawk && c.Mohawk != "" {
		return c.Mohawk
	}
	return c.Name()
}

// Suites are the names Cases accepts.
var Suites = []string{"fedavg", "codec", "all"}

// Cases returns the cases of a suite: "fedavg" (Aggregate and
// MemoryFloor), "codec" (Codec) or "all". Cases of one call share lazily
// built input data; their workers=auto cases run with a Machine probed
// once, on first use (ResolveProbe, without a cache).
func Cases(suite string) ([]Case, error) {
	return cases(suite, &fixture{resolve: func() ProbeInfo { return ResolveProbe(Options{Auto: AutoProbe}, false) }})
}

func cases(suite string, fx *fixture) ([]Case, error) {
	switch suite {
	case "fedavg":
		return append(aggregateCases(fx), floorCases(fx)...), nil
	case "codec":
		return codecCases(), nil
	case "all":
		return append(append(aggregateCases(fx), floorCases(fx)...), codecCases()...), nil
	}
	return nil, fmt.Errorf("unknown suite %q: want one of %v", suite, Suites)
}

// RunSub runs every case of bench as a sub-benchmark of b; the _test.go
// benchmarks are thin wrappers around it.
func RunSub(b *testing.B, cases []Case, bench string) {
	for _, c := range cases {
		if c.Bench == bench {
			b.Run(c.Sub, c.Run)
		}
	}
}
