package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Small hand-written SVG charts: no dependency, viewable in any browser
// and on GitHub.

type series struct {
	name   string
	color  string
	dashed bool
	values []float64 // per category; NaN: no point
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// lineChart draws series over categories; logY plots the y axis in
// decades.
func lineChart(title, yLabel string, cats []string, ss []series, logY bool) string {
	const W, H, left, right, top, bottom = 760.0, 440.0, 80.0, 180.0, 50.0, 60.0
	pw, ph := W-left-right, H-top-bottom
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		for _, v := range s.values {
			if !math.IsNaN(v) && v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		hi, lo = 1, 0.1
	}
	var ticks []float64
	var y func(v float64) float64
	if logY {
		l0, l1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if l1 == l0 {
			l1++
		}
		for e := l0; e <= l1; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
		y = func(v float64) float64 { return top + ph - (math.Log10(v)-l0)/(l1-l0)*ph }
	} else {
		step := niceStep(hi / 5)
		maxV := math.Ceil(hi/step) * step
		for v := 0.0; v <= maxV+step/2; v += step {
			ticks = append(ticks, v)
		}
		y = func(v float64) float64 { return top + ph - v/maxV*ph }
	}
	x := func(i int) float64 {
		if len(cats) == 1 {
			return left + pw/2
		}
		return left + float64(i)*pw/float64(len(cats)-1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="28" font-size="16" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, left+pw, y(t), y(t))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(t)+4, tickLabel(t))
	}
	for i, c := range cats {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(i), top+ph+20, html.EscapeString(c))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, left+pw, top+ph, top+ph)
	fmt.Fprintf(&b, `<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+ph/2, html.EscapeString(yLabel))
	for si, s := range ss {
		color := s.color
		if color == "" {
			color = palette[si%len(palette)]
		}
		var pts []string
		for i, v := range s.values {
			if math.IsNaN(v) || (logY && v <= 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %s</title></circle>`+"\n", x(i), y(v), color,
				html.EscapeString(s.name), num(v))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), color, dash)
		ly := top + 10 + float64(si)*20
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", W-right+15, W-right+40, ly, ly, color, dash)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", W-right+46, ly+4, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// barChart draws pairs of horizontal bars (p50, p99) per label on a log
// scale.
func barChart(title string, labels []string, a, c []float64, aName, cName string) string {
	const left, right, top, rowH = 330.0, 40.0, 50.0, 30.0
	W := 900.0
	H := top + rowH*float64(len(labels)) + 50
	pw := W - left - right
	lo, hi := math.Inf(1), 0.0
	for _, v := range append(slicesConcat(a, c), 0) {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == 0 {
		lo, hi = 0.1, 1
	}
	l0, l1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if l1 == l0 {
		l1++
	}
	x := func(v float64) float64 {
		if v <= 0 {
			return left
		}
		return left + (math.Log10(v)-l0)/(l1-l0)*pw
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="28" font-size="16" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for e := l0; e <= l1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(v), x(v), top-5, H-40)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s ms</text>`+"\n", x(v), H-24, tickLabel(v))
	}
	for i, l := range labels {
		yy := top + float64(i)*rowH
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, yy+16, html.EscapeString(l))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="%s"><title>%s %s ms</title></rect>`+"\n",
			left, yy+3, math.Max(x(a[i])-left, 1), palette[0], aName, num(a[i]))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="%s"><title>%s %s ms</title></rect>`+"\n",
			left, yy+14, math.Max(x(c[i])-left, 1), palette[1], cName, num(c[i]))
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="38" width="12" height="10" fill="%s"/><text x="%.1f" y="47">%s</text>`+"\n", W-220, palette[0], W-204, aName)
	fmt.Fprintf(&b, `<rect x="%.1f" y="38" width="12" height="10" fill="%s"/><text x="%.1f" y="47">%s</text>`+"\n", W-130, palette[1], W-114, cName)
	b.WriteString("</svg>\n")
	return b.String()
}

func slicesConcat(a, b []float64) []float64 { return append(append([]float64{}, a...), b...) }

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*e {
			return m * e
		}
	}
	return 10 * e
}

func tickLabel(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 1:
		return fmt.Sprintf("%g", v)
	default:
		return fmt.Sprintf("%g", v)
	}
}

// charts are the run's SVG files by name.
func charts(rep Report) map[string]string {
	out := map[string]string{}
	if rep.Write != nil && len(rep.Write.Steps) > 0 {
		var cats []string
		var calls, tps, p50, p99, p999, pg99 []float64
		for _, s := range rep.Write.Steps {
			if s.Mode != "closed" {
				continue
			}
			cats = append(cats, fmt.Sprint(s.Concurrency))
			calls = append(calls, s.CallsPerSec)
			l := s.Latency["all"]
			p50, p99, p999 = append(p50, l.P50), append(p99, l.P99), append(p999, l.P999)
			if s.Pgbench != nil {
				tps, pg99 = append(tps, s.Pgbench.TPS), append(pg99, s.Pgbench.P99ms)
			} else {
				tps, pg99 = append(tps, math.NaN()), append(pg99, math.NaN())
			}
		}
		if len(cats) > 0 {
			out["throughput.svg"] = lineChart("Wallet throughput vs concurrency (load "+rep.Machine.LoadStart+")", "per second", cats,
				[]series{{name: "wallet calls/s", values: calls}, {name: "pgbench insert tps", values: tps, dashed: true}}, false)
			out["latency.svg"] = lineChart("Wallet call latency vs concurrency", "ms (log)", cats,
				[]series{{name: "p50", values: p50}, {name: "p99", values: p99}, {name: "p99.9", values: p999},
					{name: "pgbench p99", values: pg99, dashed: true}}, true)
		}
	}
	if rep.Read != nil && len(rep.Read.Queries) > 0 {
		var labels []string
		var a, c []float64
		for _, q := range rep.Read.Queries {
			labels = append(labels, q.Name)
			a, c = append(a, q.Latency.P50), append(c, q.Latency.P99)
		}
		out["read.svg"] = barChart(fmt.Sprintf("Read side latency, %d events", rep.Read.Events), labels, a, c, "p50", "p99")
	}
	return out
}
