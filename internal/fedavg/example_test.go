package fedavg_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/fedavg"
)

func Example() {
	agg, err := fedavg.New(fedavg.Config{Workers: fedavg.Auto})
	if err != nil {
		panic(err)
	}
	defer agg.Close()
	updates := [][]float32{{1, 0}, {0, 1}, {1, 1}}
	samples := []float64{100, 300, 100} // client sample counts
	global := make([]float32, 2)
	fmt.Println(agg.FedAvg(global, updates, samples), global)
	fmt.Println(agg.FedAvg(global, updates, []float64{1, 0, 1}))
	// Output:
	// <nil> [0.4 0.8]
	// fedavg: invalid weight (client 1): weight 0 must be a finite sample count > 0
}

// A Machine that needs 4 MiB per worker and gains nothing past 2 workers
// gives 512×8192 (16 MiB) two workers (on GOMAXPROCS >= 2); the zero Machine is the constant
// fallback of ResolveWorkers.
func ExampleMachine_Workers() {
	m := fedavg.Machine{BytesPerWorker: 4 << 20, MaxWorkers: 2}
	fmt.Println(m.Workers(512, 8192, fedavg.Auto), m.Workers(32, 2048, fedavg.Auto), m.Workers(512, 8192, 3))
	// Output: 2 1 3
}
