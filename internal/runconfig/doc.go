// Package runconfig resolves what `sagebench run` is asked to do into
// frozen experiments: per Q, its defaults at the chosen scale, then the
// --config YAML (strict: unknown keys are errors; ${VAR} expanded), then
// the flags the user set. Flags and YAML fill the same structs (Shared
// and the Q's Config), each validated with the key it came from.
//
// A Resolved experiment carries its effective configuration three ways:
// as YAML (feed it back with -c to reproduce), as canonical JSON
// (run.json run_config) and as hashes — config_hash (without
// output_dir, repeat and qN.target, which change no request) and
// workload_hash (config_hash without the backend), by which runs are
// matched and compared.
package runconfig
