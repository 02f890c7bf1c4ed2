package headless

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core/tool"
)

// RegisterBuiltins registers the frontend versions of the built-in tools
// (ask_user, render_chart) in r. Offer them per context through ToolsFor,
// which swaps or drops them where there is no client.
func RegisterBuiltins(r *tool.Registry) error {
	if err := tool.Register(r, askUserDef(tool.TierFrontend), askUserFrontend); err != nil {
		return fmt.Errorf("registering built-in tools: %w", err)
	}
	if err := tool.Register(r, renderChartDef(tool.TierFrontend), renderChartFrontend); err != nil {
		return fmt.Errorf("registering built-in tools: %w", err)
	}
	return nil
}

// AddBuiltinSwaps adds the server equivalents of the built-in tools to s:
// ask_user pauses for a person in Slack, Discord, Matrix and the terminal (not in
// the scheduler, where nobody is waiting to answer); render_chart renders
// a PNG in every context without a client.
func AddBuiltinSwaps(s *Swapper) error {
	ask, err := tool.New(askUserDef(tool.TierServer), askUserQuestion)
	if err != nil {
		return fmt.Errorf("building headless ask_user: %w", err)
	}
	chart, err := tool.New(renderChartDef(tool.TierServer), renderChartServer)
	if err != nil {
		return fmt.Errorf("building headless render_chart: %w", err)
	}
	for _, ctx := range []tool.ContextName{tool.ContextSlack, tool.ContextDiscord, tool.ContextTelegram, tool.ContextMatrix, tool.ContextTerminal} {
		if err := s.Add(ctx, ask); err != nil {
			return err
		}
	}
	for _, ctx := range []tool.ContextName{tool.ContextSlack, tool.ContextDiscord, tool.ContextTelegram, tool.ContextMatrix, tool.ContextTerminal, tool.ContextScheduler, tool.ContextMCP} {
		if err := s.Add(ctx, chart); err != nil {
			return err
		}
	}
	return nil
}
