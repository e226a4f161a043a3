#pragma once
// libcurl, opened on first use (dlopen) rather than linked: libcurl brings
// some thirty shared libraries (TLS, Kerberos, LDAP, ...) whose loading and
// relocation cost every lull process about 4 ms of start-up, and only the
// HTTP client (curl_http_client.cc) needs them. Included by that file only.
#include <curl/curl.h>

namespace lull::net {

// The libcurl functions lull calls, resolved from the loaded library.
struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_wakeup) multi_wakeup;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// Loads libcurl and runs curl_global_init once (thread-safe); throws
// std::runtime_error naming the library or the missing function.
const CurlLibrary& curl_library();

}  // namespace lull::net
