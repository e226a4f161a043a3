#include "runtime/net/curl_library.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace lull::net {

namespace {

// The SONAME of libcurl 7.16 and later (Debian 12's libcurl4, what the
// headers lull builds against describe).
#define LULL_LIBCURL_SONAME "libcurl.so.4"

template <class Fn>
void resolve(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) throw std::runtime_error(std::string("libcurl: ") + LULL_LIBCURL_SONAME + " has no " + name);
}

CurlLibrary load() {
  void* lib = dlopen(LULL_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("libcurl: cannot load ") + LULL_LIBCURL_SONAME + ": " +
                             (why ? why : "unknown error"));
  }
  CurlLibrary c{};
  resolve(lib, "curl_global_init", c.global_init);
  resolve(lib, "curl_easy_init", c.easy_init);
  resolve(lib, "curl_easy_reset", c.easy_reset);
  resolve(lib, "curl_easy_cleanup", c.easy_cleanup);
  resolve(lib, "curl_easy_setopt", c.easy_setopt);
  resolve(lib, "curl_easy_getinfo", c.easy_getinfo);
  resolve(lib, "curl_easy_strerror", c.easy_strerror);
  resolve(lib, "curl_multi_init", c.multi_init);
  resolve(lib, "curl_multi_cleanup", c.multi_cleanup);
  resolve(lib, "curl_multi_setopt", c.multi_setopt);
  resolve(lib, "curl_multi_add_handle", c.multi_add_handle);
  resolve(lib, "curl_multi_remove_handle", c.multi_remove_handle);
  resolve(lib, "curl_multi_perform", c.multi_perform);
  resolve(lib, "curl_multi_info_read", c.multi_info_read);
  resolve(lib, "curl_multi_poll", c.multi_poll);
  resolve(lib, "curl_multi_wakeup", c.multi_wakeup);
  resolve(lib, "curl_slist_append", c.slist_append);
  resolve(lib, "curl_slist_free_all", c.slist_free_all);
  if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl: global init failed");
  return c;  // the library stays loaded for the process's life
}

}  // namespace

const CurlLibrary& curl_library() {
  static const CurlLibrary lib = load();  // a throw leaves it unset: the next call tries again
  return lib;
}

}  // namespace lull::net
