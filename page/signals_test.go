package page

import (
	"math"
	"slices"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// newestPage is a two-engine page of the newest vLLM families. No capture
// of them exists: names, types, labels and buckets are the reference's
// (vllm-metrics §2–3.5 and §8, engines-and-gpus §1); the values are made
// up to tell the figures apart.
var newestPage = lines(
	`vllm:num_requests_waiting{engine="0",model_name="m"} 5`,
	`vllm:num_requests_waiting{engine="1",model_name="m"} 1`,
	`vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="capacity"} 3`,
	`vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="deferred"} 2`,
	`vllm:num_requests_waiting_by_reason{engine="1",model_name="m",reason="capacity"} 1`,
	`vllm:num_requests_waiting_by_reason{engine="1",model_name="m",reason="deferred"} 0`,
	`vllm:num_requests_waiting_by_reason{engine="1",model_name="m",reason="newer_reason"} 9`,
	`vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="awake"} 1`,
	`vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="weights_offloaded"} 0`,
	`vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="discard_all"} 0`,
	`vllm:engine_sleep_state{engine="1",model_name="m",sleep_state="awake"} 0`,
	`vllm:engine_sleep_state{engine="1",model_name="m",sleep_state="weights_offloaded"} 1`,
	`vllm:engine_sleep_state{engine="1",model_name="m",sleep_state="discard_all"} 0`,
	`# TYPE vllm:admission_rejections_total counter`,
	`vllm:admission_rejections_total{model_name="m",reason="max_num_queued_reqs"} 4`,
	`vllm:admission_rejections_total{model_name="m",reason="max_num_queued_tokens"} 3`,
	`vllm:prompt_tokens_total{engine="0",model_name="m"} 1000`,
	`vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_compute"} 600`,
	`vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_cache_hit"} 300`,
	`vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="external_kv_transfer"} 100`,
	`vllm:prompt_tokens_cached_total{engine="0",model_name="m"} 400`,
	`vllm:prompt_tokens_recomputed_total{engine="0",model_name="m"} 50`,
	`vllm:external_prefix_cache_queries_total{engine="0",model_name="m"} 200`,
	`vllm:external_prefix_cache_hits_total{engine="0",model_name="m"} 100`,
	`# TYPE vllm:request_num_preemptions histogram`,
	`vllm:request_num_preemptions_bucket{engine="0",le="1.0",model_name="m"} 2`,
	`vllm:request_num_preemptions_bucket{engine="0",le="2.0",model_name="m"} 3`,
	`vllm:request_num_preemptions_bucket{engine="0",le="+Inf",model_name="m"} 3`,
	`vllm:request_num_preemptions_sum{engine="0",model_name="m"} 4`,
	`vllm:request_num_preemptions_count{engine="0",model_name="m"} 3`,
	`# TYPE vllm:nixl_xfer_time_seconds histogram`,
	`vllm:nixl_xfer_time_seconds_bucket{engine="1",le="0.05",model_name="m"} 8`,
	`vllm:nixl_xfer_time_seconds_bucket{engine="1",le="+Inf",model_name="m"} 10`,
	`vllm:nixl_xfer_time_seconds_sum{engine="1",model_name="m"} 0.9`,
	`vllm:nixl_xfer_time_seconds_count{engine="1",model_name="m"} 10`,
	`# TYPE vllm:nixl_bytes_transferred histogram`,
	`vllm:nixl_bytes_transferred_bucket{engine="1",le="+Inf",model_name="m"} 10`,
	`vllm:nixl_bytes_transferred_sum{engine="1",model_name="m"} 6.7e+08`,
	`vllm:nixl_bytes_transferred_count{engine="1",model_name="m"} 10`,
	`vllm:nixl_num_failed_transfers_total{engine="1",model_name="m"} 2`,
	`vllm:kv_offload_load_bytes_total{engine="0",model_name="m"} 1e+09`,
	`vllm:kv_offload_store_bytes_total{engine="0",model_name="m"} 2e+09`,
	`vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100`,
	`vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 80`,
	`vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="2"} 20`,
	`vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="0"} 10`,
	`vllm:lora_requests_info{max_lora="4",running_lora_adapters="sql,chat",waiting_lora_adapters=""} 1.7e+09`,
	`vllm:lora_requests_info{max_lora="4",running_lora_adapters="sql",waiting_lora_adapters="law"} 1.8e+09`,
	`vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.6e+09`)

func TestNewestVLLMSignals(t *testing.T) {
	nan := math.NaN()
	s := checkEngineCase(t, engineCase{
		page: newestPage, kind: catalogue.EngineVLLM,
		figures: []want{
			{"waiting", scalar(catalogue.Waiting), 6},
			{"waiting for capacity", scalar(catalogue.WaitingCapacity), 4},
			{"waiting deferred", scalar(catalogue.WaitingDeferred), 2},
			{"awake: one engine is", scalar(catalogue.SleepLevel), 0},
			{"rejections, every reason, no engine", scalar(catalogue.AdmissionRejections), 7},
			{"computed locally", scalar(catalogue.PromptTokensLocalCompute), 600},
			{"local cache hits", scalar(catalogue.PromptTokensLocalCacheHit), 300},
			{"transferred", scalar(catalogue.PromptTokensExternal), 100},
			{"cached", scalar(catalogue.PromptTokensCached), 400},
			{"recomputed", scalar(catalogue.PromptTokensRecomputed), 50},
			{"external queries", scalar(catalogue.ExternalPrefixQueries), 200},
			{"external hits", scalar(catalogue.ExternalPrefixHits), 100},
			{"preempted requests", histCount(catalogue.PreemptionsPerRequest), 3},
			{"preemptions of finished requests", histSum(catalogue.PreemptionsPerRequest), 4},
			{"preempted once", bucketAt(catalogue.PreemptionsPerRequest, 1), 2},
			{"nixl transfers", histCount(catalogue.NIXLTransferTime), 10},
			{"nixl bytes", histSum(catalogue.NIXLTransferBytes), 6.7e8},
			{"nixl failures", scalar(catalogue.NIXLFailedTransfers), 2},
			{"offload loads", scalar(catalogue.KVOffloadLoadBytes), 1e9},
			{"offload stores", scalar(catalogue.KVOffloadStoreBytes), 2e9},
			{"no preemption counter on this page", scalar(catalogue.Preemptions), nan},
		},
	})
	if len(s.Engines) != 2 {
		t.Fatalf("Engines = %d, want 2 (the rejections' missing engine label makes no third)", len(s.Engines))
	}
	if got := s.Engines[1].Scalars[catalogue.SleepLevel]; got != 1 {
		t.Errorf("engine 1 sleep level = %v, want 1 (weights offloaded)", got)
	}
	if got := s.Engines[0].Scalars[catalogue.WaitingDeferred]; got != 2 {
		t.Errorf("engine 0 deferred = %v, want 2", got)
	}
	pos := s.Total.SpecAcceptedPerPos
	if len(pos) != 3 || pos[0] != 90 || !math.IsNaN(pos[1]) || pos[2] != 20 {
		t.Errorf("accepted per position = %v, want [90 NaN 20]", pos)
	}
	lora := s.LoRA
	if !lora.Present || lora.MaxLoRAs != 4 || !slices.Equal(lora.Running, []string{"sql"}) || !slices.Equal(lora.Waiting, []string{"law"}) {
		t.Errorf("LoRA = %+v, want the newest series: max 4, running [sql], waiting [law]", lora)
	}
}

// A replica is asleep only when every engine is; the level is the
// lightest sleep among them.
func TestSleepLevel(t *testing.T) {
	state := func(engine, st string, v string) string {
		return `vllm:engine_sleep_state{engine="` + engine + `",model_name="m",sleep_state="` + st + `"} ` + v
	}
	tests := []struct {
		name string
		page string
		want float64
	}{
		{"one engine, level 2", lines(state("0", "awake", "0"), state("0", "weights_offloaded", "0"), state("0", "discard_all", "1")), 2},
		{"both asleep, levels 1 and 2", lines(state("0", "weights_offloaded", "1"), state("1", "discard_all", "1")), 1},
		{"unknown state ignored", lines(state("0", "hibernating", "1")), math.NaN()},
		{"no state is 1", lines(state("0", "awake", "0")), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewIngester().Ingest([]byte(tt.page), "")
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Total.Scalars[catalogue.SleepLevel]; !sameFloat(got, tt.want) {
				t.Errorf("SleepLevel = %v, want %v", got, tt.want)
			}
		})
	}
}

// A secret of vtop's that holds a comma (a --header value) and that a
// server echoes among its adapters is hidden before the list is split:
// no piece of it is shown as an adapter.
func TestLoRAOfHidesSplitSecret(t *testing.T) {
	const secret = "team-a,SECRET-77"
	safetext.AddSecrets(secret)
	lora := LoRAOf(func(name string) string {
		if name == "running_lora_adapters" {
			return "sql," + secret
		}
		return ""
	})
	if !slices.Equal(lora.Running, []string{"sql", safetext.Redacted}) {
		t.Errorf("running adapters %q, want [sql %s]", lora.Running, safetext.Redacted)
	}
}
