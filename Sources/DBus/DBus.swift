// DBus: placeholder until its issue lands.
