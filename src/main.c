#include <stdio.h>
#include "util.h"
int main(void) { errorf("not yet"); return 1; }
