// Package ray models a Ray cluster's Jobs REST API (the dashboard, port
// 8265) as far as sagebench's `--backend ray` needs it, and the contract
// between sagebench and its Ray driver (backends/ray/sagebench_ray.py).
//
// Pipeline: Package zips the driver and the run's Plan into a
// working_dir package (gcs://_ray_pkg_<sha1>.zip) that Upload puts on
// the cluster (GET/PUT /api/packages/gcs/…); Submit posts the JobSpec
// (POST /api/jobs/, trailing slash) under a submission_id derived from
// the run id, attaching to the job when that id already exists (the API
// answers a duplicate with 500); Await polls GET /api/jobs/{id} with
// backoff until a terminal status while it streams the job's log over
// the websocket GET /api/jobs/{id}/logs/tail (each byte once; a broken
// stream resumed from its offset; GET /api/jobs/{id}/logs only as the
// fallback after the job ended) into a writer, and stops the job (POST
// /api/jobs/{id}/stop) when its context is cancelled. The driver declares
// its stages ready in a Meta line before its schedule's zero, then prints
// its records, one marked line each; a Parser reads them as the log
// streams in. Every request, the websocket's handshake included, carries
// the cluster token, when one is set, as `Authorization: Bearer …` and
// `x-ray-authorization: Bearer …`.
package ray
