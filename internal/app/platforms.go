package app

// buildPlatforms creates the Slack and Discord adapters whose tokens are set.
func (a *App) buildPlatforms() error {
	return nil
}
