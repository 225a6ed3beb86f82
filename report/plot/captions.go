package plot

// howToRead says, per figure (Figures' names), how to read it: the caption
// of its picture in the HTML report, after its title.
var howToRead = map[string]string{
	"timeline": "Requests arriving per time bucket on the first seed, one panel per policy: admitted (blue, bottom) under rejected (orange, top); " +
		"the dashed line is what the server admits per bucket (0 during an outage). A bar above the line is load the server turned away.",
	"load": "What the clients offered per bucket on the first seed: first attempts (yellow, bottom) under retries (vermillion, top), against the server's capacity (dashed); " +
		"lines: operations completed per bucket (green) and attempts in flight (dotted purple). Retries far above the line are a retry storm.",
	"cdf": "Share of all operations (clients × seeds) completed within a time from their own start. A curve that ends below 1 gave up on the rest: " +
		"read the height it ends at before the time it gets there.",
	"outcomes": "Per policy, mean per run: operations completed, give-ups stacked by reason, attempts per operation. " +
		"Hollow bars: the policy completes under 95% of the share the best one completes, so its lower attempts may be work it abandoned.",
	"distributions": "Spread over the seeds per policy: box from the first to the third quartile, line at the median, whiskers to 1.5×IQR, circles beyond. " +
		"Panels marked (completed only) describe only the operations that completed; the label above each box says what share that is. Hollow: as in outcomes.",
	"members": "For a pool, per policy on the first seed: the requests the balancer sent each member per bucket (solid, one colour per member) and those the member failed (dashed, same colour). " +
		"A solid line that drops to 0 while the others rise is a member ejected or cooled down; a dashed line that meets its solid one is a member failing everything (a crash); the grey dotted line is the requests the pool answered itself with 429, every member being cooled down.",
}
