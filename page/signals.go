package page

import (
	"math"
	"strconv"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// maxLoRANames caps the adapter names kept of lora_requests_info.
const maxLoRANames = 64

// LoRAOf is what one series of vllm:lora_requests_info says of the
// adapters, given its labels, names made safe to draw. Of several series,
// the one of the highest value (the time of the last change) is the
// state. Every source reads the family through it.
func LoRAOf(label catalogue.Labels) catalogue.LoRA {
	maxLoRA, err := strconv.ParseFloat(label("max_lora"), 64)
	if err != nil {
		maxLoRA = math.NaN()
	}
	return catalogue.LoRA{
		Present:  true,
		MaxLoRAs: maxLoRA,
		Running:  adapterNames(label("running_lora_adapters")),
		Waiting:  adapterNames(label("waiting_lora_adapters")),
	}
}

// adapterNames splits a comma-joined list of adapters, made safe to draw.
// vtop's secrets are hidden before the split: one that holds a comma
// would be cut into pieces no longer told from names.
func adapterNames(v string) []string {
	var out []string
	for name := range strings.SplitSeq(safetext.Redact(v), ",") {
		if name = strings.TrimSpace(name); name != "" && len(out) < maxLoRANames {
			out = append(out, safetext.Sanitize(name))
		}
	}
	return out
}
