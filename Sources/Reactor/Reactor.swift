// Reactor: placeholder until its issue lands.
