// XDMF descriptions of HDF5 snapshots (grove/io/xdmf.hpp): made from what the file holds, read
// through grove::io::Hdf5File by this process alone.
#include "grove/io/xdmf.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grove/core/error.hpp"
#include "grove/io/hdf5_file.hpp"

namespace grove::io {

namespace {

constexpr const char* kStage = "grove::io::xdmf";

// Text for an XML attribute or element (a field's name may hold '&' or '<').
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string numberTypeOf(Scalar type) {
  switch (type) {
    case Scalar::kFloat64: return R"(NumberType="Float" Precision="8")";
    case Scalar::kFloat32: return R"(NumberType="Float" Precision="4")";
    case Scalar::kInt64: return R"(NumberType="Int" Precision="8")";
    case Scalar::kInt32: return R"(NumberType="Int" Precision="4")";
  }
  return {};
}

// The HDF5 file as the XDMF file in `relative_to` names it.
std::string referenceTo(const std::string& snapshot_path, const std::string& relative_to) {
  namespace fs = std::filesystem;
  const fs::path relative = fs::absolute(snapshot_path).lexically_normal().lexically_relative(
      fs::absolute(relative_to).lexically_normal());
  return relative.empty() ? fs::path(snapshot_path).filename().generic_string() : relative.generic_string();
}

std::string dataItem(const std::string& reference, const std::string& dataset, const DatasetShape& shape,
                     const std::string& indent) {
  const std::string dimensions =
      shape.components == 1 ? fmt::format("{}", shape.rows) : fmt::format("{} {}", shape.rows, shape.components);
  return fmt::format("{}<DataItem Dimensions=\"{}\" {} Format=\"HDF\">{}:{}</DataItem>\n", indent, dimensions,
                     numberTypeOf(*shape.type), escaped(reference), escaped(dataset));
}

// One particle type's grid: its Coordinates as the points, every other table of as many rows as
// particles an attribute of them (a table of another shape, or of a type XDMF cannot name, is
// left out: it is no per-particle field).
std::string gridOfType(const Hdf5File& file, const std::string& reference, int type, std::int64_t count,
                       const std::string& time_element, const std::string& indent) {
  const std::string group = fmt::format("/PartType{}", type);
  const std::string coordinates = group + "/Coordinates";
  require(file.hasDataset(coordinates), kStage, "{}: {} has {} particles but no Coordinates", file.path(), group,
          count);
  const DatasetShape where = file.shape(coordinates);
  require(where.rows == count && where.components == 3 && where.type, kStage,
          "{}: {} holds {} rows of {} (the header says {} particles, each of 3 coordinates)", file.path(), coordinates,
          where.rows, where.components, count);
  std::string text = fmt::format("{}<Grid Name=\"PartType{}\" GridType=\"Uniform\">\n", indent, type);
  text += time_element;
  text += fmt::format("{}  <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"{}\" NodesPerElement=\"1\"/>\n",
                      indent, count);
  text += fmt::format("{}  <Geometry GeometryType=\"XYZ\">\n", indent);
  text += dataItem(reference, coordinates, where, indent + "    ");
  text += fmt::format("{}  </Geometry>\n", indent);
  for (const std::string& name : file.children(group)) {
    if (name == "Coordinates" || !file.hasDataset(group + "/" + name)) continue;
    const DatasetShape s = file.shape(group + "/" + name);
    if (s.rows != count || !s.type || (s.components != 1 && s.components != 3)) continue;
    text += fmt::format("{}  <Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"Node\">\n", indent, escaped(name),
                        s.components == 1 ? "Scalar" : "Vector");
    text += dataItem(reference, group + "/" + name, s, indent + "    ");
    text += fmt::format("{}  </Attribute>\n", indent);
  }
  text += fmt::format("{}</Grid>\n", indent);
  return text;
}

// A snapshot's grid (one type) or spatial collection of grids (several), at its time.
std::string gridOfSnapshot(const std::string& snapshot_path, const std::string& relative_to, const std::string& indent) {
  const Hdf5File file(snapshot_path, Hdf5File::Mode::kRead, nullptr);
  require(file.hasAttribute("/Header", "NumPart_Total"), kStage,
          "{} is no snapshot in GADGET's layout (it has no /Header/NumPart_Total)", snapshot_path);
  const std::vector<std::int64_t> totals = file.readIntegers("/Header", "NumPart_Total");
  const double time = file.hasAttribute("/Header", "Time") ? file.readDoubles("/Header", "Time").at(0) : 0.0;
  const std::string reference = referenceTo(snapshot_path, relative_to);
  std::vector<int> types;
  for (std::size_t t = 0; t < totals.size(); ++t)
    if (totals[t] > 0) types.push_back(static_cast<int>(t));
  if (types.empty()) return {};  // no particle: no grid
  // Time with 17 significant digits: the snapshot's double, read back the same.
  const auto time_of = [&](const std::string& at) { return fmt::format("{}  <Time Value=\"{:.17g}\"/>\n", at, time); };
  if (types.size() == 1)
    return gridOfType(file, reference, types[0], totals[static_cast<std::size_t>(types[0])], time_of(indent), indent);
  std::string text = fmt::format("{}<Grid Name=\"{}\" GridType=\"Collection\" CollectionType=\"Spatial\">\n", indent,
                                 escaped(std::filesystem::path(snapshot_path).stem().string()));
  text += time_of(indent);
  for (const int t : types)
    text += gridOfType(file, reference, t, totals[static_cast<std::size_t>(t)], "", indent + "  ");
  text += fmt::format("{}</Grid>\n", indent);
  return text;
}

std::string document(const std::string& grids) {
  return "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n  <Domain>\n" +
         grids + "  </Domain>\n</Xdmf>\n";
}

}  // namespace

std::string xdmfPathOf(const std::string& snapshot_path) {
  return std::filesystem::path(snapshot_path).replace_extension(".xdmf").string();
}

std::string xdmfOfSnapshot(const std::string& snapshot_path, const std::string& relative_to) {
  const std::string grid = gridOfSnapshot(snapshot_path, relative_to, "    ");
  require(!grid.empty(), kStage, "{} holds no particle (NumPart_Total is 0 for every type): XDMF has no grid of none",
          snapshot_path);
  return document(grid);
}

std::string xdmfOfSeries(const std::vector<std::string>& snapshot_paths, const std::string& relative_to) {
  require(!snapshot_paths.empty(), kStage, "a time series of no snapshot");
  // A snapshot of no particle is left out (no grid of no point).
  std::string steps;
  for (const std::string& path : snapshot_paths) steps += gridOfSnapshot(path, relative_to, "      ");
  require(!steps.empty(), kStage, "none of the {} snapshots from {} holds a particle", snapshot_paths.size(),
          snapshot_paths.front());
  const std::string grids =
      "    <Grid Name=\"TimeSeries\" GridType=\"Collection\" CollectionType=\"Temporal\">\n" + steps + "    </Grid>\n";
  return document(grids);
}

}  // namespace grove::io
