// FlowStore: placeholder until its issue lands.
