// Systemd: placeholder until its issue lands.
