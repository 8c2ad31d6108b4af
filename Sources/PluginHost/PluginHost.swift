// PluginHost: placeholder until its issue lands.
