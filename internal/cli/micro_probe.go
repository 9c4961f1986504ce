package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/sagebench/sagebench/internal/micro"
)

// microProbeOptions are the flags of `sagebench micro probe`.
type microProbeOptions struct {
	force bool
	cpu   int
	cache string
}

func newMicroProbeCmd() *cobra.Command {
	var o microProbeOptions
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Show, revalidate or refresh the machine probe behind FedAvg workers=auto",
		Long: `Resolve the probe workers=auto runs with, exactly as "sagebench micro" does
at start, and describe it: the model per probed dimension (bytes per worker,
worker ceiling), when and under what load it was probed, this start's
revalidation (agrees, refined by the pooled paired rounds, or reprobed
because a cell now ran faster than the cache: the cache had been taken
under load), auto's worker count per shape of the matrix, per dimension the
grid of fastest trials with the median paired ratio of each worker count to
one worker (the number that decides), and the cache's history.

A cached probe expires after 7 days, or when the CPU, the instruction
kernel, the OS kernel release, GOMAXPROCS or the probe's version changes.
--force discards the cache and probes afresh.`,
		Example: `  sagebench micro probe
  sagebench micro probe --force
  sagebench micro probe --cpu 2 --machine-cache /tmp/probe.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMicroProbe(cmd, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.force, "force", false, "discard the cached probe and probe the machine afresh")
	f.IntVar(&o.cpu, "cpu", 0, "GOMAXPROCS to probe for (`N`; 0 keeps the current value)")
	f.StringVar(&o.cache, "machine-cache", "", "probe cache file (default: the user cache directory's sagebench/fedavg-machine.json; off: no cache)")
	return cmd
}

func runMicroProbe(cmd *cobra.Command, o microProbeOptions) error {
	if o.cpu < 0 {
		return usageErrorf("micro probe: --cpu %d: must be at least 1 (or 0 to keep GOMAXPROCS)", o.cpu)
	}
	if o.cpu > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.cpu))
	}
	p := micro.ResolveProbe(micro.Options{Auto: micro.AutoProbe, MachineCache: microCachePath(o.cache)}, o.force)
	if err := micro.WriteProbe(cmd.OutOrStdout(), p); err != nil {
		return fmt.Errorf("micro probe: %w", err)
	}
	return nil
}
