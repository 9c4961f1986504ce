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
