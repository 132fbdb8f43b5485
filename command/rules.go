package command

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/rules"
)

// Rules is `vtop rules`: vtop's judgement as a Prometheus rule file, so
// that Prometheus raises the states vtop shows on a fleet nobody watches.
type Rules struct {
	SLOTTFT            time.Duration `name:"slo-ttft" default:"${slo_ttft}" help:"p99 TTFT above which a replica that is not full is SLOW."`
	SLOITL             time.Duration `name:"slo-itl" default:"${slo_itl}" help:"p99 inter-token latency above which a replica that is not full is SLOW."`
	Window             time.Duration `default:"${window}" help:"Window of rates and quantiles."`
	Hysteresis         int           `default:"${hysteresis}" help:"Evaluations a judged state (SLOW, STALE, IDLE, and every return to health) must hold: for: and keep_firing_for: are this many evaluations less one."`
	EvaluationInterval time.Duration `default:"5s" help:"The rule group's interval; set it to the scrape interval of the replicas: one reading is one evaluation."`
	GroupBy            []string      `default:"instance" placeholder:"LABEL" help:"The labels whose values are the replicas (the labels your fleet uses: pod, or instance)."`
	Format             string        `enum:"prometheus,prometheus-operator,vmalert" default:"prometheus" help:"prometheus: a rule file for rule_files; prometheus-operator: a PrometheusRule object; vmalert: a rule file for vmalert over VictoriaMetrics (its queries ask with nocache=1, which VictoriaMetrics' default -search.latencyOffset needs for the rules to read the present)."`
	KeepFiringFor      bool          `default:"true" negatable:"" help:"Write keep_firing_for: (Prometheus 2.42 and later); --no-keep-firing-for for older servers."`
	Output             string        `short:"o" placeholder:"FILE" help:"Write to FILE, replacing it (default: standard output)."`
}

// Help is the long help of `vtop rules --help`.
func (r *Rules) Help() string {
	return `Writes vtop's judgement (docs/verdicts.md) as Prometheus rules: recording rules
for the figures the states read (running, waiting, preemptions, the TTFT and ITL
p99 over the window), and one alert per state, VtopDown, VtopPreempting,
VtopFull, VtopSlow, VtopStale and VtopIdle, with the thresholds vtop judges by.
A replica is in the highest state that fires; none firing is healthy.

The metric names are those vtop reads: every vLLM version's, SGLang's,
TensorRT-LLM's, TGI's, llama.cpp's and Dynamo's. A proven state (DOWN, FULL,
PREEMPTING) fires at once; a judged one (SLOW, STALE, IDLE) after --hysteresis
evaluations; a state that ends is kept as long (keep_firing_for). The file's
header lists what the rules cannot say as vtop does, and why.

  vtop rules -o /etc/prometheus/rules/vtop.yml
  promtool check rules /etc/prometheus/rules/vtop.yml
  vtop rules --format prometheus-operator --group-by pod | kubectl apply -f -
  vtop rules --format vmalert -o /etc/vmalert/vtop.yml`
}

// Run writes the rules.
func (r *Rules) Run(env *Env) error {
	cfg := analysis.DefaultConfig()
	cfg.SLOTTFT, cfg.SLOITL, cfg.Window, cfg.Hysteresis = r.SLOTTFT, r.SLOITL, r.Window, r.Hysteresis
	opts := rules.Options{Config: cfg, EvaluationInterval: r.EvaluationInterval, GroupBy: r.GroupBy, KeepFiringFor: r.KeepFiringFor}
	file, err := rules.Build(opts)
	if err != nil {
		return usagef("%v", err)
	}
	var b bytes.Buffer
	if err := rules.Write(&b, file, rules.Format(r.Format)); err != nil {
		return usagef("%v", err)
	}
	if r.Output == "" || r.Output == "-" {
		_, err = env.Stdout.Write(b.Bytes())
		return err
	}
	if err := os.WriteFile(r.Output, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	return nil
}
