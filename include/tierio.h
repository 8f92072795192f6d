/* tierio: every tier of an HPC machine through the programming models MPI applications
 * already use. Umbrella header. */
#ifndef TIERIO_H
#define TIERIO_H

#include "tierio/version.h"
#include "tierio/hints.h"
#include "tierio/win.h"
#include "tierio/ckpt.h"
#include "tierio/topo.h"
#include "tierio/tier.h"
#include "tierio/net.h"
#include "tierio/agg.h"
#include "tierio/settings.h"

#endif
