package workload

import "github.com/sagebench/sagebench/internal/ray"

// OnRay is implemented by a workload whose client side can also run on a
// Ray cluster (--backend ray). OnRay returns that workload, sharing the
// receiver's configuration (Config, Plan and StackYAML are the same; Run
// submits a Ray job). Resolve calls it after the configuration is final.
type OnRay interface {
	OnRay(c ray.Config) Workload
}
