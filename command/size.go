package command

import (
	"fmt"
	"strconv"
	"strings"
)

// parseSize reads a byte size such as 16MiB, 512KiB, 1GiB or 1048576.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	factor := int64(1)
	number := strings.TrimSpace(s)
	for _, u := range units {
		if strings.HasSuffix(number, u.suffix) {
			number, factor = strings.TrimSpace(strings.TrimSuffix(number, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(number, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 16MiB, 512KiB)", s)
	}
	if n > (1<<62)/factor {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * factor, nil
}
