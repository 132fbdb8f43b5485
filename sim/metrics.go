package sim

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vtop-dev/vtop/catalogue"
)

// VLLM versions the simulator can impersonate.
const (
	// V1 is the current page: V1 names, an engine label on every engine
	// metric.
	V1 = "v1"
	// V0 is a V0-era page (≤ 0.10): gpu_cache_usage_perc,
	// time_per_output_token_seconds, gpu_prefix_cache_* counters, no engine
	// label (engines are summed, as multiprocess mode did).
	V0 = "v0"
	// Latest is the newest page: V1's families plus admission rejections,
	// preemptions per request and, on a disaggregated replica, NIXL's
	// (catalogue.VLLMLatest, catalogue.VLLMNIXL).
	Latest = "latest"
)

// scalarFamily is a gauge or counter with one value per engine.
type scalarFamily struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(e *engine) float64
}

// histFamily is a histogram with one child per engine.
type histFamily struct {
	desc *prometheus.Desc
	hist func(s *engineStats) *hist
}

// collector exposes a replica's state through client_golang. It reads the
// engines without locking: Collect runs only inside Replica.gather, which
// holds the replica's mutex for the whole Gather.
type collector struct {
	r          *Replica
	labels     []string // model_name, and engine on a V1 page
	engineLbl  bool     // V1: an engine label on every engine metric
	scalars    []scalarFamily
	hists      []histFamily
	success    *prometheus.Desc
	byReason   *prometheus.Desc
	bySource   *prometheus.Desc
	sleep      *prometheus.Desc
	cacheInfo  *prometheus.Desc
	specPerPos *prometheus.Desc
	rejections *prometheus.Desc // Latest only
	http       *prometheus.Desc
	process    []scalarFamily // process_* of the server, from the replica clock
	gc         *prometheus.Desc
}

func newCollector(r *Replica) *collector {
	c := &collector{r: r, engineLbl: r.version != V0}
	c.labels = []string{"model_name"}
	if c.engineLbl {
		c.labels = append(c.labels, "engine")
	}
	c.addCoreFamilies()
	if c.engineLbl {
		c.addV1Families()
	} else {
		c.addV0Families()
	}
	c.cacheInfo = prometheus.NewDesc("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", cacheInfoLabels(c.engineLbl), nil)
	c.addHistograms()
	if r.version == Latest {
		c.addLatestFamilies()
	}
	c.addProcessFamilies()
	return c
}

// with is the collector's labels and extra ones, in a slice of their own.
func (c *collector) with(extra ...string) []string {
	return append(append([]string(nil), c.labels...), extra...)
}

// gauge declares a gauge with one value per engine, read by f.
func (c *collector) gauge(name, help string, f func(e *engine) float64) {
	c.scalars = append(c.scalars, scalarFamily{prometheus.NewDesc(name, help, c.labels, nil), prometheus.GaugeValue, f})
}

// counter declares a counter with one value per engine, read by f.
func (c *collector) counter(name, help string, f func(e *engine) float64) {
	c.scalars = append(c.scalars, scalarFamily{prometheus.NewDesc(name, help, c.labels, nil), prometheus.CounterValue, f})
}

// histogram declares a histogram with one child per engine, read by f.
func (c *collector) histogram(name, help string, f func(s *engineStats) *hist) {
	c.hists = append(c.hists, histFamily{prometheus.NewDesc(name, help, c.labels, nil), f})
}

// zero reads 0 of any engine: a family the simulator does not model.
func zero(*engine) float64 { return 0 }

// addCoreFamilies declares the families of every page: the batch, the
// queue, the tokens, the preemptions and the finished requests.
func (c *collector) addCoreFamilies() {
	c.gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
		func(e *engine) float64 { return float64(len(e.running)) })
	c.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting)
	c.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.",
		func(e *engine) float64 { return e.stats.promptTokens })
	c.counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
		func(e *engine) float64 { return e.stats.generationTokens })
	c.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
		func(e *engine) float64 { return e.stats.preemptions })
	c.success = prometheus.NewDesc("vllm:request_success_total",
		"Count of successfully processed requests.", c.with("finished_reason"), nil)
}

// addV1Families declares the families of a V1 page: KV usage, the queue
// by reason, sleep, prompt tokens by source, the caches and, with
// speculative decoding, its drafts.
func (c *collector) addV1Families() {
	c.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", (*engine).kvUsage)
	c.byReason = prometheus.NewDesc("vllm:num_requests_waiting_by_reason",
		"Number of requests waiting to be processed, by reason.", c.with("reason"), nil)
	c.sleep = prometheus.NewDesc("vllm:engine_sleep_state",
		"Engine sleep state; awake = 0 means engine is sleeping.", c.with("sleep_state"), nil)
	c.bySource = prometheus.NewDesc("vllm:prompt_tokens_by_source_total",
		"Number of prompt tokens by source.", c.with("source"), nil)
	c.counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local + external).",
		func(e *engine) float64 { return e.stats.promptCached + e.stats.promptExternal })
	c.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
		func(e *engine) float64 { return e.stats.prefixQueries })
	c.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
		func(e *engine) float64 { return e.stats.prefixHits })
	c.counter("vllm:external_prefix_cache_queries_total", "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.", zero)
	c.counter("vllm:external_prefix_cache_hits_total", "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.", zero)
	c.counter("vllm:mm_cache_queries_total", "Multi-modal cache queries, in terms of number of queried items.", zero)
	c.counter("vllm:mm_cache_hits_total", "Multi-modal cache hits, in terms of number of cached items.", zero)
	c.counter("vllm:estimated_flops_per_gpu_total", "Estimated number of floating point operations per GPU (for Model Flops Utilization calculations).", zero)
	c.counter("vllm:estimated_read_bytes_per_gpu_total", "Estimated number of bytes read from memory per GPU (for Model Bandwidth Utilization calculations).", zero)
	c.counter("vllm:estimated_write_bytes_per_gpu_total", "Estimated number of bytes written to memory per GPU (for Model Bandwidth Utilization calculations).", zero)
	if c.r.cfg.SpecTokens > 0 {
		c.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.",
			func(e *engine) float64 { return e.stats.specDrafts })
		c.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.",
			func(e *engine) float64 { return e.stats.specDraftTokens })
		c.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.",
			func(e *engine) float64 { return e.stats.specAccepted })
		c.specPerPos = prometheus.NewDesc("vllm:spec_decode_num_accepted_tokens_per_pos_total",
			"Accepted tokens per draft position.", c.with("position"), nil)
	}
}

// addV0Families declares the families of a V0 page: swapped requests,
// GPU and CPU cache usage and, with prefix caching, its queries and hits.
func (c *collector) addV0Families() {
	c.gauge("vllm:num_requests_swapped", "Number of requests swapped to CPU.", zero)
	// Engines are summed on a V0 page, so each contributes its share of
	// the mean usage.
	engines := float64(len(c.r.engines))
	c.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.",
		func(e *engine) float64 { return e.kvUsage() / engines })
	c.gauge("vllm:cpu_cache_usage_perc", "CPU KV-cache usage. 1 means 100 percent usage.", zero)
	if c.r.cfg.PrefixCaching {
		c.counter("vllm:gpu_prefix_cache_queries_total", "GPU prefix cache queries, in terms of number of queried tokens.",
			func(e *engine) float64 { return e.stats.prefixQueries })
		c.counter("vllm:gpu_prefix_cache_hits_total", "GPU prefix cache hits, in terms of number of cached tokens.",
			func(e *engine) float64 { return e.stats.prefixHits })
	}
}

// addHistograms declares the latency and length histograms, V1's or V0's.
func (c *collector) addHistograms() {
	c.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
		func(s *engineStats) *hist { return s.iterationTokens })
	c.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		func(s *engineStats) *hist { return s.ttft })
	if c.engineLbl {
		c.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
			func(s *engineStats) *hist { return s.itl })
		c.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.",
			func(s *engineStats) *hist { return s.tpot })
		c.histogram("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
			func(s *engineStats) *hist { return s.kvComputed })
	} else {
		c.histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
			func(s *engineStats) *hist { return s.itl })
	}
	c.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
		func(s *engineStats) *hist { return s.e2e })
	c.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
		func(s *engineStats) *hist { return s.queue })
	c.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
		func(s *engineStats) *hist { return s.inference })
	c.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
		func(s *engineStats) *hist { return s.prefill })
	c.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
		func(s *engineStats) *hist { return s.decode })
	c.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
		func(s *engineStats) *hist { return s.promptLen })
	c.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.",
		func(s *engineStats) *hist { return s.genLen })
	c.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.",
		func(s *engineStats) *hist { return s.maxGen })
	c.histogram("vllm:request_params_n", "Histogram of the n request parameter.",
		func(s *engineStats) *hist { return s.paramsN })
	c.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
		func(s *engineStats) *hist { return s.paramsMaxTokens })
}

// addLatestFamilies declares the newest page's families (vllm-metrics §3.3,
// §3.5, §8): admission rejections for the whole server, preemptions per
// request, and NIXL's on a replica of a disaggregated pair.
func (c *collector) addLatestFamilies() {
	c.rejections = prometheus.NewDesc("vllm:admission_rejections_total",
		"Number of admission attempts rejected.", []string{"model_name", "reason"}, nil)
	c.histogram("vllm:request_num_preemptions", "Number of preemptions per finished request.",
		func(s *engineStats) *hist { return s.preemptionsPerReq })
	if c.r.cfg.Role == "" {
		return
	}
	c.histogram("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.",
		func(s *engineStats) *hist { return s.nixlTime })
	c.histogram("vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.",
		func(s *engineStats) *hist { return s.nixlBytes })
	empty := map[string][]float64{
		"vllm:nixl_post_time_seconds": catalogue.NIXLPostTimeBuckets, "vllm:nixl_num_descriptors": catalogue.NIXLDescriptorBuckets}
	for _, name := range []string{"vllm:nixl_post_time_seconds", "vllm:nixl_num_descriptors"} {
		h := newHist(empty[name]) // not modelled: registered, never observed
		c.histogram(name, "NIXL "+name[len("vllm:nixl_"):]+".", func(*engineStats) *hist { return h })
	}
	labels := []string{"model_name", "engine"}
	for _, f := range []struct {
		name  string
		value func(e *engine) float64
	}{
		{"vllm:nixl_num_failed_transfers_total", func(e *engine) float64 { return e.stats.nixlFailed }},
		{"vllm:nixl_num_failed_notifications_total", func(*engine) float64 { return 0 }},
		{"vllm:nixl_num_kv_expired_reqs_total", func(*engine) float64 { return 0 }},
	} {
		c.scalars = append(c.scalars, scalarFamily{prometheus.NewDesc(f.name, "NIXL "+f.name[len("vllm:nixl_"):]+".", labels, nil),
			prometheus.CounterValue, f.value})
	}
}

// addProcessFamilies declares the frontend's http and process metrics. They
// come from the replica's virtual clock and accounting, not from this Go
// process, so that a page depends only on the seed and the virtual time.
func (c *collector) addProcessFamilies() {
	c.http = prometheus.NewDesc("http_requests_total", "Total number of requests by method, status and handler.",
		[]string{"handler", "method", "status"}, nil)
	c.gc = prometheus.NewDesc("python_gc_collections_total", "Number of times this generation was collected",
		[]string{"generation"}, nil)
	proc := func(name, help string, kind prometheus.ValueType, f func(r *Replica) float64) {
		c.process = append(c.process, scalarFamily{prometheus.NewDesc(name, help, nil, nil), kind,
			func(*engine) float64 { return f(c.r) }})
	}
	proc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", prometheus.GaugeValue,
		func(r *Replica) float64 { return float64(r.startWall.UnixNano()) / 1e9 })
	proc("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", prometheus.CounterValue,
		func(r *Replica) float64 {
			return r.uptime()*0.05 + r.sumStats(func(s *engineStats) float64 { return s.busySeconds })*0.9
		})
	proc("process_resident_memory_bytes", "Resident memory size in bytes.", prometheus.GaugeValue,
		func(r *Replica) float64 { return 3.2e9 + 4096*float64(r.inFlight()) })
	proc("process_virtual_memory_bytes", "Virtual memory size in bytes.", prometheus.GaugeValue,
		func(r *Replica) float64 { return 4.1e10 })
	proc("process_open_fds", "Number of open file descriptors.", prometheus.GaugeValue,
		func(r *Replica) float64 { return float64(64 + r.inFlight()) })
	proc("process_max_fds", "Maximum number of open file descriptors.", prometheus.GaugeValue,
		func(r *Replica) float64 { return 1048576 })
}

// cacheInfoLabels are the CacheConfig fields vLLM writes as labels, sorted.
func cacheInfoLabels(engineLbl bool) []string {
	l := []string{"block_size", "cache_dtype", "enable_prefix_caching", "gpu_memory_utilization",
		"num_cpu_blocks", "num_gpu_blocks", "num_gpu_blocks_override", "sliding_window"}
	if engineLbl {
		l = append(l, "engine")
	}
	return l
}

// Describe sends nothing: the collector is unchecked, as its families
// depend on the replica's options.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect sends every family of the page.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	for _, v := range c.views() {
		for _, f := range c.scalars {
			ch <- prometheus.MustNewConstMetric(f.desc, f.kind, v.scalar(f.value), v.labels...)
		}
		for _, f := range c.hists {
			h := v.hist(f.hist)
			ch <- prometheus.MustNewConstHistogram(f.desc, h.count, h.sum, h.cumulative(), v.labels...)
		}
		c.collectLabelled(ch, v)
	}
	if c.rejections != nil {
		// --max-num-queued-reqs is the only limit modelled; the label value
		// is the flag's name, the reference does not spell the values.
		ch <- prometheus.MustNewConstMetric(c.rejections, prometheus.CounterValue,
			r.sumStats(func(s *engineStats) float64 { return s.rejected }), r.cfg.Model, "max_num_queued_reqs")
	}
	for _, f := range c.process {
		ch <- prometheus.MustNewConstMetric(f.desc, f.kind, f.value(nil))
	}
	ch <- prometheus.MustNewConstMetric(c.http, prometheus.CounterValue,
		r.sumStats(func(s *engineStats) float64 { return s.httpRequests }), "/v1/chat/completions", "POST", "2xx")
	finished := r.sumStats(func(s *engineStats) float64 { return s.httpRequests })
	for gen, per := range []float64{40, 400, 4000} {
		ch <- prometheus.MustNewConstMetric(c.gc, prometheus.CounterValue,
			float64(int(r.uptime()/10+finished/per)), strconv.Itoa(gen))
	}
}

// collectLabelled sends the families with a label beyond model_name and
// engine.
func (c *collector) collectLabelled(ch chan<- prometheus.Metric, v view) {
	cfg := c.r.cfg
	for i, name := range catalogue.FinishReasonNames {
		n := v.scalar(func(e *engine) float64 { return e.stats.finished[i] })
		if c.engineLbl || (n > 0 && catalogue.FinishReason(i) <= catalogue.FinishAbort) { // V0 created children on first use
			ch <- prometheus.MustNewConstMetric(c.success, prometheus.CounterValue, n, append(v.labels, name)...)
		}
	}
	info := []string{strconv.Itoa(cfg.BlockSize), "auto", pyBool(cfg.PrefixCaching), "0.9",
		"0", strconv.Itoa(cfg.NumGPUBlocks), "None", "None"}
	if c.engineLbl {
		info = append(info, v.labels[1])
	}
	ch <- prometheus.MustNewConstMetric(c.cacheInfo, prometheus.GaugeValue, 1, info...)
	if !c.engineLbl {
		return
	}
	capacity := v.scalar(func(e *engine) float64 { return float64(len(e.waiting)) })
	deferred := v.scalar(func(e *engine) float64 { return float64(len(e.deferred)) })
	ch <- prometheus.MustNewConstMetric(c.byReason, prometheus.GaugeValue, capacity, append(v.labels, "capacity")...)
	ch <- prometheus.MustNewConstMetric(c.byReason, prometheus.GaugeValue, deferred, append(v.labels, "deferred")...)
	for level, st := range catalogue.SleepStates {
		ch <- prometheus.MustNewConstMetric(c.sleep, prometheus.GaugeValue, boolFloat(level == cfg.SleepLevel), append(v.labels, st)...)
	}
	computed := v.scalar(func(e *engine) float64 { return e.stats.promptComputed })
	cached := v.scalar(func(e *engine) float64 { return e.stats.promptCached })
	external := v.scalar(func(e *engine) float64 { return e.stats.promptExternal })
	for _, src := range []struct {
		name  string
		value float64
	}{{"local_compute", computed}, {"local_cache_hit", cached}, {"external_kv_transfer", external}} {
		ch <- prometheus.MustNewConstMetric(c.bySource, prometheus.CounterValue, src.value, append(v.labels, src.name)...)
	}
	if c.specPerPos != nil {
		for pos := range cfg.SpecTokens {
			n := v.scalar(func(e *engine) float64 { return e.stats.specAcceptedPerPos[pos] })
			ch <- prometheus.MustNewConstMetric(c.specPerPos, prometheus.CounterValue, n, append(v.labels, strconv.Itoa(pos))...)
		}
	}
}

// view is what one label set of the page shows: one engine (V1), or all
// engines summed (V0, which had no engine label).
type view struct {
	labels  []string
	engines []*engine
}

func (c *collector) views() []view {
	model := c.r.cfg.Model
	if !c.engineLbl {
		return []view{{labels: []string{model}, engines: c.r.engines}}
	}
	out := make([]view, len(c.r.engines))
	for i, e := range c.r.engines {
		out[i] = view{labels: []string{model, strconv.Itoa(i)}, engines: []*engine{e}}
	}
	return out
}

// scalar sums f over the view's engines.
func (v view) scalar(f func(e *engine) float64) float64 {
	var sum float64
	for _, e := range v.engines {
		sum += f(e)
	}
	return sum
}

// hist returns the histogram of the view, summed over its engines.
func (v view) hist(f func(s *engineStats) *hist) *hist {
	if len(v.engines) == 1 {
		return f(v.engines[0].stats)
	}
	first := f(v.engines[0].stats)
	out := newHist(first.bounds)
	for _, e := range v.engines {
		h := f(e.stats)
		for i, n := range h.counts {
			out.counts[i] += n
		}
		out.sum += h.sum
		out.count += h.count
	}
	return out
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
