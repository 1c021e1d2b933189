// Boost.JSON's compiled parts (error categories and the like), built into
// the library from Boost's headers, so no Boost.JSON binary is needed.
#include <boost/json/src.hpp>
