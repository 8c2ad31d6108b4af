// FlowCLI: placeholder until its issue lands.
