// Package raydriver ships sagebench's Ray driver (sagebench_ray.py and
// its HTTP client, sagebench_http.py) in the binary: `run --backend ray`
// uploads them with the run's plan as the job's working_dir. The driver
// and its tests are Python; see README.md.
package raydriver

import _ "embed"

var (
	//go:embed sagebench_ray.py
	script []byte
	//go:embed sagebench_http.py
	httpClient []byte
)

// FileName is the driver's entry point in the working_dir package.
const FileName = "sagebench_ray.py"

// Files returns the driver's files by their names in the working_dir.
func Files() map[string][]byte {
	return map[string][]byte{
		FileName:            append([]byte(nil), script...),
		"sagebench_http.py": append([]byte(nil), httpClient...),
	}
}

// Entrypoint is the job's command: the driver reading plan (a file in
// the working_dir).
// python3: a cluster image may have no unversioned "python".
func Entrypoint(plan string) string { return "python3 " + FileName + " --plan " + plan }
