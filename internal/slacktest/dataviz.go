package slacktest

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// The data visualization block, held to Slack's reference
// (https://docs.slack.dev/reference/block-kit/blocks/data-visualization-block):
// a title of at most 50 characters and a chart that is a pie (1 to 6
// segments, each labelled in at most 20 characters with a value above 0)
// or a bar, area or line chart (1 to 6 series, each named uniquely in at
// most 20 characters, with 1 to 20 points labelled by the axis
// config's categories, one point per category; axis titles of at most 50
// characters). Written from the reference, not from slack-go's validator,
// so that the adapter and the fake do not share a mistake.

type dataVizJSON struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	Chart *struct {
		Type     string `json:"type"`
		Segments []struct {
			Label string   `json:"label"`
			Value *float64 `json:"value"`
		} `json:"segments"`
		Series []struct {
			Name string `json:"name"`
			Data []struct {
				Label string   `json:"label"`
				Value *float64 `json:"value"`
			} `json:"data"`
		} `json:"series"`
		AxisConfig *struct {
			Categories []string `json:"categories"`
			XLabel     string   `json:"x_label"`
			YLabel     string   `json:"y_label"`
		} `json:"axis_config"`
	} `json:"chart"`
}

// checkDataVisualizations answers invalid_blocks for a data_visualization
// block that breaks the reference, or for any when refuse is set (a
// workspace Slack has not rolled the block out to).
func checkDataVisualizations(raw string, refuse bool) string {
	var blocks []json.RawMessage
	if json.Unmarshal([]byte(raw), &blocks) != nil {
		return "invalid_blocks_format"
	}
	for _, b := range blocks {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b, &head) != nil {
			return "invalid_blocks"
		}
		if head.Type != "data_visualization" {
			continue
		}
		var d dataVizJSON
		if refuse || json.Unmarshal(b, &d) != nil || !validDataViz(&d) {
			return "invalid_blocks"
		}
	}
	return ""
}

func validDataViz(d *dataVizJSON) bool {
	n := utf8.RuneCountInString
	if d.Title == "" || n(d.Title) > 50 || d.Chart == nil {
		return false
	}
	c := d.Chart
	switch c.Type {
	case "pie":
		if len(c.Segments) < 1 || len(c.Segments) > 6 {
			return false
		}
		for _, s := range c.Segments {
			if s.Label == "" || n(s.Label) > 20 || s.Value == nil || !(*s.Value > 0) || math.IsInf(*s.Value, 0) {
				return false
			}
		}
		return true
	case "bar", "area", "line":
	default:
		return false
	}
	ax := c.AxisConfig
	if ax == nil || len(ax.Categories) == 0 || n(ax.XLabel) > 50 || n(ax.YLabel) > 50 {
		return false
	}
	cats := map[string]bool{}
	for _, cat := range ax.Categories {
		if cat == "" || n(cat) > 20 || cats[cat] {
			return false
		}
		cats[cat] = true
	}
	if len(c.Series) < 1 || len(c.Series) > 6 {
		return false
	}
	names := map[string]bool{}
	for _, s := range c.Series {
		if s.Name == "" || n(s.Name) > 20 || names[s.Name] {
			return false
		}
		names[s.Name] = true
		if len(s.Data) < 1 || len(s.Data) > 20 || len(s.Data) != len(ax.Categories) {
			return false
		}
		seen := map[string]bool{}
		for _, p := range s.Data {
			if !cats[p.Label] || seen[p.Label] || p.Value == nil || math.IsNaN(*p.Value) || math.IsInf(*p.Value, 0) {
				return false
			}
			seen[p.Label] = true
		}
	}
	return true
}
