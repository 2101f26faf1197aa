#include "service/auth/verify.h"
