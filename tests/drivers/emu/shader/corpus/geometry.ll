; geometry.ll: a 2-D grid (workgroup ids x and y, packed work-item ids x and y) writing
; out[y][x] = x * 1000 + y, and a kernel reading a constant table through s_getpc_b64.
target triple = "amdgcn-amd-amdhsa"

@table = internal unnamed_addr addrspace(4) constant [8 x i32] [i32 3, i32 1, i32 4, i32 1, i32 5, i32 9, i32 2, i32 6], align 4

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()

define amdgpu_kernel void @grid2d(ptr addrspace(1) noalias %out, i32 %width) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %bx = shl i32 %gx, 3
  %by = shl i32 %gy, 3
  %x = add i32 %bx, %tx
  %y = add i32 %by, %ty
  %v0 = mul i32 %x, 1000
  %v = add i32 %v0, %y
  %r = mul i32 %y, %width
  %j = add i32 %r, %x
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %j
  store i32 %v, ptr addrspace(1) %po, align 4
  ret void
}

define amdgpu_kernel void @lookup(ptr addrspace(1) noalias %out) #1 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %k = and i32 %tx, 7
  %p = getelementptr inbounds [8 x i32], ptr addrspace(4) @table, i32 0, i32 %k
  %v = load i32, ptr addrspace(4) %p, align 4
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tx
  store i32 %v, ptr addrspace(1) %po, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="64,64" }
attributes #1 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
