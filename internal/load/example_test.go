package load_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/load"
)

func ExampleNewSchedule() {
	s, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessConstant, Rate: 4, Count: 4}, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Offsets, s.Span(), s.Rate())
	// Output: [0s 250ms 500ms 750ms] 1s 4
}

func ExampleScheduleConfig_Validate() {
	err := load.ScheduleConfig{Process: "poisson", Duration: time.Second}.Validate()
	fmt.Println(err)
	// Output: schedule.rate must be > 0 for process poisson
}

func ExampleDriver_Run() {
	s, _ := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessPoisson, Rate: 2000, Count: 100}, 7)
	var done atomic.Int64
	d := &load.Driver{MaxInFlight: 50}
	rep := d.Run(context.Background(), s, func(ctx context.Context, i int, intended time.Time) {
		done.Add(1) // send request i here; its schedule lag is time.Since(intended)
	})
	fmt.Println(rep.Mode, rep.Scheduled, rep.Dispatched, rep.Completed, done.Load(), rep.Interrupted)
	// Output: open-loop 100 100 100 100 false
}
