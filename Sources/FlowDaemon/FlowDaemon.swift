// FlowDaemon: placeholder until its issue lands.
