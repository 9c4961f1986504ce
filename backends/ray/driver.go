// Package raydriver ships sagebench's Ray driver (sagebench_ray.py) in
// the binary: `run --backend ray` uploads it with the run's plan as the
// job's working_dir. The driver and its tests are Python; see README.md.
package raydriver

import _ "embed"

//go:embed sagebench_ray.py
var script []byte

// FileName is the driver's name in the working_dir package.
const FileName = "sagebench_ray.py"

// Script returns the driver's source.
func Script() []byte { return append([]byte(nil), script...) }

// Entrypoint is the job's command: the driver reading plan (a file in
// the working_dir).
// python3: a cluster image may have no unversioned "python".
func Entrypoint(plan string) string { return "python3 " + FileName + " --plan " + plan }
