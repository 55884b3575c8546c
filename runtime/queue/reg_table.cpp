// reg_table.cpp: readable register values for logs and test failures.
#include "runtime/queue/reg_table.hpp"

#include <sstream>

namespace tg::queue {

std::string describe(const reg_table& table, const reg_info& reg, std::uint32_t value) {
  std::ostringstream out;
  out << reg.name << " = " << hex{value, 8};
  auto fields = table.fields_of(reg);
  if (fields.empty()) return out.str();
  out << " {";
  const char* sep = "";
  for (const reg_field& f : fields) {
    std::uint32_t v = f.get(value);
    out << sep << f.name << '=';
    if (v < 10) out << v;
    else out << hex{v};
    sep = ", ";
  }
  out << '}';
  return out.str();
}

}  // namespace tg::queue
