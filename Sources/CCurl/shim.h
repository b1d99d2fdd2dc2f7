// Header-only shim over Debian's libcurl (a system library target compiles no C): curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call, so each use gets a typed wrapper here.
#ifndef LIVECONTROLS_CURL_SHIM_H
#define LIVECONTROLS_CURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*lc_curl_data_callback)(char *data, size_t size, size_t count, void *user);

static inline CURLcode lc_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode lc_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode lc_curl_set_size(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode lc_curl_set_callback(CURL *handle, CURLoption option, lc_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}
static inline long lc_curl_response_code(CURL *handle) {
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
static inline void *lc_curl_private(CURL *handle) {
    char *pointer = NULL;
    curl_easy_getinfo(handle, CURLINFO_PRIVATE, &pointer);
    return pointer;
}
static inline CURLMcode lc_curl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
#endif
