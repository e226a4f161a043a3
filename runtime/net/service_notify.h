#pragma once
// Telling the service manager where lull stands (systemd's Type=notify), by
// the sd_notify protocol (sd_notify(3), a documented, stable interface):
// one datagram of "NAME=VALUE" lines to the Unix socket named by
// $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace). Without the
// variable it does nothing, so lull runs the same outside systemd. Written
// here instead of linking libsystemd: a dozen lines of socket code, and the
// .deb and the container image need no systemd library.
#include <string>

namespace lull::net {

// Sends `state` ("READY=1", "STOPPING=1", "RELOADING=1\nMONOTONIC_USEC=..."),
// a line per assignment. False when there is no $NOTIFY_SOCKET or the send
// failed (logged once at warn: the manager would wait for READY in vain).
bool notify_service_manager(const std::string& state);

// "RELOADING=1" with MONOTONIC_USEC (systemd asks for the time with it).
std::string reloading_state();

}  // namespace lull::net
