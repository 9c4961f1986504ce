// Package paper turns an experiment file into a paper's figures and
// tables, reproducibly.
//
// Model: an Experiment (YAML, strict) lists configurations — a Q, an
// optional run config file, a scale, backends, seeds and repetitions —
// and how to draw them. Each configuration, backend and scale is a
// Cell; its samples are one run per seed (seed + repetition, as `run
// --repeat` seeds them).
//
// Pipeline: Plan resolves every cell through runconfig (the same
// resolution as `sagebench run`) and matches the runs already under the
// results root by configuration (the run_config without seed, output
// directory, repetitions, targets and validity limits) and seed; Run
// executes the missing samples through the caller's runner (the CLI
// passes the one `run` uses); Render pools each cell's valid
// repetitions (answer.Pool, aggregate.Of: mean with its Student t
// interval), draws each Q's answer figure (chart: SVG and PDF at a
// column's and a page's width) and writes its tables (LaTeX booktabs
// and Markdown) and a manifest tying every file to its run IDs and
// config hashes. Rendering the same runs twice gives the same bytes: no
// timestamps, maps sorted, one embedded face.
package paper
