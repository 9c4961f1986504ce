# One function per tool: run_<tool> DIR URL RATE N runs the tool against
# URL at RATE req/s (Poisson) for N requests, 8 input and 16 output tokens,
# streamed chat, writing its native export to DIR/export. Sourced by run.sh.

run_sagebench() {
  local d=$1 url=$2 rate=$3 n=$4
  cat >"$d/q2.yaml" <<YAML
q2:
  schedule: {process: poisson, rate: $rate, count: $n}
  llm_ratio: 1
  policies: [fifo]
  rounds: 1
  llm: {model: cal, max_tokens: 16, input_tokens: 8, stream: true}
YAML
  "$SB" run -e Q2 -c "$d/q2.yaml" --target "$url" --output-dir "$d/export"
  return 0 # an "invalid run" (schedule lag above the Q's bound) still wrote its records
}

# inference-perf: a YAML config; its random data generator only speaks the
# completions API, so it streams /v1/completions (same schedule).
run_inference_perf() {
  local d=$1 url=$2 rate=$3 n=$4
  cat >"$d/cfg.yaml" <<YAML
load:
  type: poisson
  stages:
  - rate: $rate
    duration: $SECS
api:
  type: completion
  streaming: true
server:
  type: vllm
  model_name: cal
  base_url: $url
  ignore_eos: true
tokenizer:
  pretrained_model_name_or_path: $TOK
data:
  type: random
  input_distribution: {min: 8, max: 8, mean: 8, std_dev: 0}
  output_distribution: {min: 16, max: 16, mean: 16, std_dev: 0}
report:
  request_lifecycle: {summary: true, per_stage: true, per_request: true}
storage:
  local_storage: {path: $d/export}
YAML
  "$PEERS_HOME/inference-perf-0.7.0/bin/inference-perf" --config_file "$d/cfg.yaml"
}

# AIPerf: its own rate mode, Poisson arrivals. Offline mode
# (HF_HUB_OFFLINE=1) makes AIPerf 0.13.0 look a local tokenizer path up in
# the hub cache and fail, so it runs without it: a local path is loaded
# straight from disk, and no hub call is made.
run_aiperf() {
  local d=$1 url=$2 rate=$3 n=$4
  env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE "$PEERS_HOME/aiperf-0.13.0/bin/aiperf" profile \
    --model cal --url "$url" --endpoint-type chat --streaming --tokenizer "$TOK" \
    --request-rate "$rate" --arrival-pattern poisson --request-count "$n" \
    --prompt-input-tokens-mean 8 --prompt-input-tokens-stddev 0 \
    --prompt-output-tokens-mean 16 --prompt-output-tokens-stddev 0 \
    --extra-inputs ignore_eos:true --artifact-dir "$d/export" --ui-type none
}

# genai-bench has no rate mode, only concurrency (locust users): the
# nearest equivalent of RATE is RATE × 0.2 s users (Little's law with the
# schedule's 200 ms streams), capped at N requests and one minute.
run_genai_bench() {
  local d=$1 url=$2 rate=$3 n=$4 c
  c=$(python3 -c "print(max(1, round($rate * 0.2)))")
  echo "genai-bench: concurrency $c for rate $rate" >"$d/mode"
  "$PEERS_HOME/genai-bench-0.0.5/bin/genai-bench" benchmark --api-backend openai --api-base "$url" --api-key x \
    --task text-to-text --api-model-name cal --model-tokenizer "$TOK" --server-engine vLLM \
    --num-concurrency "$c" --traffic-scenario "D(8,16)" --max-time-per-run 1 --max-requests-per-run "$n" \
    --experiment-base-dir "$d/export" --log-dir "$d"
}

# GuideLLM: its own Poisson profile and a max_requests constraint; chat
# completions; the local tokenizer through its huggingface_auto kind.
run_guidellm() {
  local d=$1 url=$2 rate=$3 n=$4
  mkdir -p "$d/export"
  "$PEERS_HOME/guidellm-0.8.1/bin/guidellm" run \
    --backend "kind=openai_http,target=$url,model=cal,request_format=/v1/chat/completions" \
    --profile "kind=poisson,rate=$rate" --constraint "kind=max_requests,count=$n" \
    --data kind=synthetic_text,prompt_tokens=8,output_tokens=16 \
    --tokenizer "kind=huggingface_auto,model=$TOK" \
    --output "kind=json,path=$d/export/benchmarks.json" --disable-progress
}
