package verdicts

import (
	"bytes"
	"fmt"
	"maps"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/catalogue"
)

// Model is the model_name the replicas of the benchmark serve.
const Model = "meta-llama/Llama-3.1-8B-Instruct"

// startEpoch is the Unix time of virtual time 0 (2026-01-01 00:00 UTC),
// the base of process_start_time_seconds.
const startEpoch = 1767225600

// Exporter is one server process's /metrics: a prometheus.Registry with
// vLLM's families (names, labels and buckets from the catalogue), fed by
// the model's events. A restart is a new Exporter: its counters start at
// 0.
type Exporter struct {
	reg                                *prometheus.Registry
	running, waiting, kvUsage          prometheus.Gauge
	waitingCapacity, waitingDeferred   prometheus.Gauge
	promptTokens, generationTokens     prometheus.Counter
	preemptions, stop, abort           prometheus.Counter
	ttft, itl, e2e, queue, prefill     prometheus.Observer
	decode, inference, promptLen, gens prometheus.Observer
	buf                                bytes.Buffer
}

// finished is what the page records of a request when it finishes.
type finished struct {
	e2e, queue, prefill, decode, inference float64
	prompt, output                         int
}

// NewExporter returns the page of a process of cfg started at virtual
// time start.
func NewExporter(cfg Config, start float64) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry()}
	engine := prometheus.Labels{catalogue.LabelEngine: "0", catalogue.LabelModel: Model}
	e.running = e.gauge("vllm:num_requests_running", engine)
	e.waiting = e.gauge("vllm:num_requests_waiting", engine)
	e.kvUsage = e.gauge("vllm:kv_cache_usage_perc", engine)
	byReason := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:num_requests_waiting_by_reason", Help: "waiting by reason (vLLM)."},
		family("vllm:num_requests_waiting_by_reason").Labels)
	e.reg.MustRegister(byReason)
	e.waitingCapacity = byReason.With(withLabel(engine, "reason", "capacity"))
	e.waitingDeferred = byReason.With(withLabel(engine, "reason", "deferred"))
	e.promptTokens = e.counter("vllm:prompt_tokens_total", engine)
	e.generationTokens = e.counter("vllm:generation_tokens_total", engine)
	e.preemptions = e.counter("vllm:num_preemptions_total", engine)
	e.registerFinished(engine)
	e.ttft = e.histogram("vllm:time_to_first_token_seconds", engine)
	e.itl = e.histogram("vllm:inter_token_latency_seconds", engine)
	e.e2e = e.histogram("vllm:e2e_request_latency_seconds", engine)
	e.queue = e.histogram("vllm:request_queue_time_seconds", engine)
	e.prefill = e.histogram("vllm:request_prefill_time_seconds", engine)
	e.decode = e.histogram("vllm:request_decode_time_seconds", engine)
	e.inference = e.histogram("vllm:request_inference_time_seconds", engine)
	e.promptLen = e.histogram("vllm:request_prompt_tokens", engine)
	e.gens = e.histogram("vllm:request_generation_tokens", engine)
	e.registerProcess(cfg, start)
	return e
}

// gauge registers the catalogue's gauge of that name and returns the
// engine's.
func (e *Exporter) gauge(name string, engine prometheus.Labels) prometheus.Gauge {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name + " (vLLM)."}, family(name).Labels)
	e.reg.MustRegister(v)
	return v.With(engine)
}

// counter registers the catalogue's counter of that name and returns the
// engine's.
func (e *Exporter) counter(name string, engine prometheus.Labels) prometheus.Counter {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: name + " (vLLM)."}, family(name).Labels)
	e.reg.MustRegister(v)
	return v.With(engine)
}

// histogram registers the catalogue's histogram of that name, with its
// buckets, and returns the engine's.
func (e *Exporter) histogram(name string, engine prometheus.Labels) prometheus.Observer {
	f := family(name)
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: name + " (vLLM).", Buckets: f.Buckets}, f.Labels)
	e.reg.MustRegister(v)
	return v.With(engine)
}

// registerFinished registers the finished requests by reason. vLLM
// creates every finished_reason at 0; "stop" moves here, and "abort"
// where clients give up (Config.AbortAfter).
func (e *Exporter) registerFinished(engine prometheus.Labels) {
	success := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total", Help: "finished requests (vLLM)."},
		family("vllm:request_success_total").Labels)
	e.reg.MustRegister(success)
	for _, reason := range catalogue.FinishReasonNames {
		c := success.With(withLabel(engine, catalogue.LabelFinishedReason, reason))
		switch reason {
		case "stop":
			e.stop = c
		case "abort":
			e.abort = c
		}
	}
}

// registerProcess registers the cache config of cfg and the process's
// start at virtual time start.
func (e *Exporter) registerProcess(cfg Config, start float64) {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig"},
		[]string{catalogue.LabelEngine, "block_size", "num_gpu_blocks", "enable_prefix_caching"})
	e.reg.MustRegister(info)
	info.With(prometheus.Labels{catalogue.LabelEngine: "0", "block_size": strconv.Itoa(cfg.BlockSize),
		"num_gpu_blocks": strconv.Itoa(cfg.KVBlocks), "enable_prefix_caching": "False"}).Set(1)
	startTime := prometheus.NewGauge(prometheus.GaugeOpts{Name: "process_start_time_seconds", Help: "Start time of the process since unix epoch in seconds."})
	e.reg.MustRegister(startTime)
	startTime.Set(startEpoch + start)
}

// family is the catalogue's V1 family of that name; the benchmark lists
// no metric of its own.
func family(name string) catalogue.Family {
	f, ok := catalogue.FindFamily(catalogue.VLLMV1, name)
	if !ok {
		panic("verdicts: the catalogue has no family " + name)
	}
	return f
}

// withLabel returns the engine's labels plus name=value.
func withLabel(engine prometheus.Labels, name, value string) prometheus.Labels {
	ls := maps.Clone(engine)
	ls[name] = value
	return ls
}

// SetGauges sets the scheduler gauges: running, waiting (all of it for
// capacity) and the KV cache usage, a 0–1 fraction.
func (e *Exporter) SetGauges(running, waiting int, kvUsage float64) {
	e.running.Set(float64(running))
	e.waiting.Set(float64(waiting))
	e.waitingCapacity.Set(float64(waiting))
	e.waitingDeferred.Set(0)
	e.kvUsage.Set(kvUsage)
}

// Admitted counts a request's prompt tokens at its first admission.
func (e *Exporter) Admitted(prompt int) { e.promptTokens.Add(float64(prompt)) }

// Preempted counts a preemption.
func (e *Exporter) Preempted() { e.preemptions.Inc() }

// FirstToken records a request's TTFT.
func (e *Exporter) FirstToken(ttft float64) { e.ttft.Observe(ttft) }

// Tokens counts generated tokens and records gaps inter-token latencies
// of step seconds each.
func (e *Exporter) Tokens(tokens, gaps int, step float64) {
	e.generationTokens.Add(float64(tokens))
	for range gaps {
		e.itl.Observe(step)
	}
}

// Finished records a finished request.
func (e *Exporter) Finished(f finished) {
	e.stop.Inc()
	e.e2e.Observe(f.e2e)
	e.queue.Observe(f.queue)
	e.prefill.Observe(f.prefill)
	e.decode.Observe(f.decode)
	e.inference.Observe(f.inference)
	e.promptLen.Observe(float64(f.prompt))
	e.gens.Observe(float64(f.output))
}

// Aborted counts a request its client gave up while it waited: vLLM
// counts it finished, with reason abort.
func (e *Exporter) Aborted() { e.abort.Inc() }

// Page gathers the registry and writes it in the text format, as vLLM
// serves /metrics. The bytes are the exporter's until the next call.
func (e *Exporter) Page() ([]byte, error) {
	mfs, err := e.reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	e.buf.Reset()
	enc := expfmt.NewEncoder(&e.buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
	}
	return e.buf.Bytes(), nil
}

// ContentType is the Content-Type vLLM serves /metrics with.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"
