#include <pocketsphinx.h>
// err_set_logfp: the process-wide log (PocketSphinxDecoder).
#include <sphinxbase/err.h>
