#include "cepoll.h"
